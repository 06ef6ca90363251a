"""The `discipline` command: list disciplines, add or show one, take tools away or give them back."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK, UsageError, left_out
from ralph_desk.cli.output import jsonable, print_json, table

if TYPE_CHECKING:
    from ralph_desk.domain.records import Discipline

# Each action's words: the fewest, the most, and how they are written.
DISCIPLINE_WORDS = {
    "list": (0, 0, "no further words"),
    "show": (1, 1, "NAME"),
    "add": (1, 2, "NAME [DISPLAY_NAME]"),
    "disable": (2, 1_000, "NAME TOOL …"),
    "enable": (2, 1_000, "NAME TOOL …"),
}
DISCIPLINE_ACTIONS = tuple(DISCIPLINE_WORDS)
DEFAULT_ICON = "code"
DEFAULT_COLOR = "#64748b"


def _configure_discipline(parser: argparse.ArgumentParser) -> None:
    """Arguments of `discipline`: one action word, then its words (options may come anywhere)."""
    parser.add_argument(
        "action",
        metavar="ACTION",
        choices=DISCIPLINE_ACTIONS,
        help="list, show NAME, add NAME [DISPLAY_NAME], disable or enable NAME TOOL…",
    )
    parser.add_argument(
        "words",
        metavar="NAME [TOOL …]",
        nargs="*",
        help="the discipline, then tool names (add: its display name, default NAME)",
    )
    parser.add_argument("--icon", default=DEFAULT_ICON, help=f"add: its icon's name (default {DEFAULT_ICON})")
    parser.add_argument(
        "--color", default=DEFAULT_COLOR, help=f"add: its colour #rrggbb (default {DEFAULT_COLOR})"
    )
    parser.add_argument("--acronym", default=None, help="add: its short name on task cards")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_discipline(args: argparse.Namespace) -> int:
    """Carry out `discipline ACTION`."""
    name, tools = _discipline_words(args.action, args.words)
    with project_services(args) as services:
        disciplines = services.disciplines
        if args.action == "list":
            listed = disciplines.list()
            if args.json:
                print_json([jsonable(item) for item in listed])
                return left_out(listed.errors)
            rows = [(item.name, item.display_name, _tool_names(item.disabled_tools)) for item in listed]
            print("\n".join(table(rows) or ["  (no disciplines)"]))
            return left_out(listed.errors)
        if args.action == "show":
            discipline = disciplines.get(name)
        elif args.action == "add":
            display = tools[0] if tools else name
            discipline = disciplines.create(name, display, args.icon, args.color, acronym=args.acronym)
        elif args.action == "disable":
            discipline = disciplines.disable_tools(name, tools)
        else:
            discipline = disciplines.enable_tools(name, tools)
    if args.json:
        print_json({**jsonable(discipline), "tools_by_recipe": _tools_by_recipe(discipline)})
        return EXIT_OK
    print("\n".join(_discipline_lines(discipline)))
    return EXIT_OK


def _discipline_words(action: str, words: list[str]) -> tuple[str, list[str]]:
    """The discipline's name and the tool names, as many as the action takes; UsageError otherwise."""
    fewest, most, wanted = DISCIPLINE_WORDS[action]
    if not fewest <= len(words) <= most:
        raise UsageError(f"discipline {action} takes {wanted} (got: {' '.join(words) or 'nothing'})")
    return (words[0], words[1:]) if words else ("", [])


def _tool_names(names: tuple[str, ...] | list[str]) -> str:
    return ", ".join(names) if names else "(none)"


def _tools_by_recipe(discipline: Discipline) -> dict[str, list[str]]:
    """The tools a session of each recipe gets once this discipline took its tools away."""
    from ralph_desk.domain.enums import Recipe
    from ralph_desk.domain.recipes import enabled_tools
    from ralph_desk.domain.tools import in_registry_order

    taken = discipline.disabled_tools
    return {recipe.value: in_registry_order(enabled_tools(recipe, taken)) for recipe in Recipe}


def _discipline_lines(discipline: Discipline) -> list[str]:
    lines = [
        f"{discipline.name}: {discipline.display_name}",
        f"takes away: {_tool_names(discipline.disabled_tools)}",
        "",
        "Tools its sessions get, by recipe:",
    ]
    rows = [(recipe, _tool_names(tools)) for recipe, tools in _tools_by_recipe(discipline).items()]
    return lines + table(rows)


DISCIPLINE = Command(
    "discipline",
    "list or add disciplines, or take tools away or give them back",
    _configure_discipline,
    _run_discipline,
)
