"""The `feature` command: list the features, add one or show one."""

from __future__ import annotations

import argparse

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK, UsageError, left_out
from ralph_desk.cli.output import jsonable, print_json, shorten, table

# Each action's words: the fewest, the most, and how they are written.
FEATURE_WORDS = {
    "list": (0, 0, "no further words"),
    "show": (1, 1, "NAME"),
    "add": (1, 2, "NAME [DISPLAY_NAME]"),
}


def _configure_feature(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        metavar="ACTION",
        choices=tuple(FEATURE_WORDS),
        help="list, show NAME, add NAME [DISPLAY_NAME]",
    )
    parser.add_argument(
        "words", metavar="NAME [DISPLAY_NAME]", nargs="*", help="the feature (add: its display name)"
    )
    parser.add_argument("--description", default=None, help="add: what the feature is")
    parser.add_argument("--acronym", default=None, help="add: its short name on task cards")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def _run_feature(args: argparse.Namespace) -> int:
    """Carry out `feature ACTION` through the feature service (checked as the MCP tools' arguments)."""
    fewest, most, wanted = FEATURE_WORDS[args.action]
    if not fewest <= len(args.words) <= most:
        raise UsageError(f"feature {args.action} takes {wanted} (got: {' '.join(args.words) or 'nothing'})")
    with project_services(args) as services:
        if args.action == "list":
            listed = services.features.list()
            if args.json:
                print_json([jsonable(item) for item in listed])
                return left_out(listed.errors)
            rows = [(item.name, item.display_name, shorten(item.description, 60)) for item in listed]
            print("\n".join(table(rows) or ["  (no features)"]))
            return left_out(listed.errors)
        name = args.words[0]
        if args.action == "add":
            display = args.words[1] if len(args.words) > 1 else name
            feature = services.features.create(
                name, display, description=args.description, acronym=args.acronym
            )
        else:
            feature = services.features.get(name)
    if args.json:
        print_json(jsonable(feature))
    else:
        print(f"{feature.name}: {feature.display_name}")
        if feature.description:
            print(feature.description)
    return EXIT_OK


FEATURE = Command("feature", "list, add or show features", _configure_feature, _run_feature)
