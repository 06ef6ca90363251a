"""The loop's joints stay single: one builder of a runner (private names: the import-linter contract)."""

from __future__ import annotations

from pathlib import Path

import ralph_desk
from ralph_desk.loop import build

PACKAGE = Path(ralph_desk.__file__).parent


def test_a_loop_runner_is_built_in_one_place_only() -> None:
    builders = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "LoopRunner(" in path.read_text(encoding="utf-8")
    ]
    assert builders == [str(Path(build.__file__).relative_to(PACKAGE))]
