"""`ralph-desk discipline`: list, show, and take tools away from or give them back to a discipline.

The same service calls as the window's tool matrix: a discipline only takes tools away from what a
recipe allows, and names that are no tool are refused with the known ones.
"""

from __future__ import annotations

import argparse

from ralph_desk.cli import EXIT_OK, UsageError, _jsonable, _print_json, _services, _table
from ralph_desk.domain.enums import Recipe
from ralph_desk.domain.recipes import RECIPE_ALLOWED, enabled_tools
from ralph_desk.domain.records import Discipline
from ralph_desk.domain.tools import in_registry_order

# Each action's words: the fewest, the most, and how they are written.
WORDS = {
    "list": (0, 0, "no further words"),
    "show": (1, 1, "NAME"),
    "disable": (2, 1_000, "NAME TOOL …"),
    "enable": (2, 1_000, "NAME TOOL …"),
}
ACTIONS = tuple(WORDS)


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `discipline`: one action word, then its words (options may come anywhere)."""
    parser.add_argument(
        "action", metavar="ACTION", choices=ACTIONS, help="list, show NAME, disable/enable NAME TOOL…"
    )
    parser.add_argument("words", metavar="NAME [TOOL …]", nargs="*", help="the discipline, then tool names")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(args: argparse.Namespace) -> int:
    """Carry out `discipline ACTION`."""
    name, tools = _words(args.action, args.words)
    with _services(args) as services:
        disciplines = services.disciplines
        if args.action == "list":
            listed = disciplines.list()
            if args.json:
                _print_json([_jsonable(item) for item in listed])
                return EXIT_OK
            rows = [(item.name, item.display_name, _tools(item.disabled_tools)) for item in listed]
            print("\n".join(_table(rows) or ["  (no disciplines)"]))
            return EXIT_OK
        if args.action == "show":
            discipline = disciplines.get(name)
        elif args.action == "disable":
            discipline = disciplines.disable_tools(name, tools)
        else:
            discipline = disciplines.enable_tools(name, tools)
    if args.json:
        _print_json({**_jsonable(discipline), "tools_by_recipe": _by_recipe(discipline)})
        return EXIT_OK
    print("\n".join(_shown(discipline)))
    return EXIT_OK


def _words(action: str, words: list[str]) -> tuple[str, list[str]]:
    """The discipline's name and the tool names, as many as the action takes; UsageError otherwise."""
    fewest, most, wanted = WORDS[action]
    if not fewest <= len(words) <= most:
        raise UsageError(f"discipline {action} takes {wanted} (got: {' '.join(words) or 'nothing'})")
    return (words[0], words[1:]) if words else ("", [])


def _tools(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names) if names else "(none)"


def _by_recipe(discipline: Discipline) -> dict[str, list[str]]:
    return {
        recipe.value: in_registry_order(enabled_tools(recipe, discipline.disabled_tools)) for recipe in Recipe
    }


def _shown(discipline: Discipline) -> list[str]:
    lines = [
        f"{discipline.name}: {discipline.display_name}",
        f"takes away: {_tools(discipline.disabled_tools)}",
        "",
        "Tools its sessions get, by recipe (of those the recipe allows):",
    ]
    rows = []
    for recipe in Recipe:
        given = enabled_tools(recipe, discipline.disabled_tools)
        rows.append(
            (recipe.value, f"{len(given)}/{len(RECIPE_ALLOWED[recipe])}", _tools(in_registry_order(given)))
        )
    return lines + _table(rows)
