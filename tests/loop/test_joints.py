"""The loop's joints stay single: one builder of a runner, no module reading another's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import ralph_desk
from ralph_desk.loop import build

PACKAGE = Path(ralph_desk.__file__).parent
LOOP = PACKAGE / "loop"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _reaches(path: Path) -> list[str]:
    """Where a module names a private name of another object or module (self and cls are its own)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{path.name}:{node.lineno} imports {alias.name}"
                for alias in node.names
                if _private(alias.name)
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in {"self", "cls"}):
                found.append(f"{path.name}:{node.lineno} reads .{node.attr}")
    return found


def test_no_loop_module_reads_another_objects_private_names() -> None:
    assert [reach for path in sorted(LOOP.rglob("*.py")) for reach in _reaches(path)] == []


def test_a_loop_runner_is_built_in_one_place_only() -> None:
    builders = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "LoopRunner(" in path.read_text(encoding="utf-8")
    ]
    assert builders == [str(Path(build.__file__).relative_to(PACKAGE))]
