"""Commands that read and write a prd.json: `import-prd` and `export-prd`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK, UsageError, left_out
from ralph_desk.cli.output import print_json


def _configure_import_prd(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the prd.json to import")
    parser.add_argument("--feature", help="feature of new tasks (default: 'general', created when needed)")
    parser.add_argument(
        "--discipline", help="discipline of new tasks (default: 'general', created when needed)"
    )


def _run_import_prd(args: argparse.Namespace) -> int:
    from ralph_desk import prd

    try:
        document = prd.load(Path(args.file))
    except prd.PrdError as error:
        raise UsageError(str(error)) from None
    with project_services(args) as services:
        try:
            result = prd.import_document(services, document, feature=args.feature, discipline=args.discipline)
        except prd.PrdError as error:
            raise UsageError(str(error)) from None
    print(
        f"Imported {len(document.stories)} stories from {args.file}: "
        f"{len(result.created)} created, {len(result.updated)} updated, {len(result.unchanged)} unchanged"
    )
    return EXIT_OK


def _configure_export_prd(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="where to write prd.json ('-' for standard output)")


def _run_export_prd(args: argparse.Namespace) -> int:
    from ralph_desk import prd

    with project_services(args) as services:
        document, errors = prd.export(services)
    if args.file == "-":
        print_json(document)
    else:
        prd.write(Path(args.file), document)
        print(f"Exported {len(document['userStories'])} stories to {args.file}")
    return left_out(errors)


IMPORT_PRD = Command(
    "import-prd", "import the user stories of a prd.json as tasks", _configure_import_prd, _run_import_prd
)
EXPORT_PRD = Command("export-prd", "write the tasks as a prd.json", _configure_export_prd, _run_export_prd)
