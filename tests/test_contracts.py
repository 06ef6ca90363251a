"""The import contracts in pyproject.toml fail closed: every module is fenced from its first line."""

from __future__ import annotations

import ast
import pkgutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

import ralph_desk
from linting.private_names import private_uses

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
PACKAGE = Path(ralph_desk.__file__).parent
# fence: (the packages it forbids, the only modules allowed to import them)
FENCES = {
    "Qt": (["PySide6", "shiboken6", "qasync"], {"ralph_desk.gui.**", "ralph_desk.app"}),
    "MCP SDK": (["mcp"], {"ralph_desk.mcp_server.**"}),
    "web stack": (
        ["uvicorn", "starlette", "jinja2"],
        {"ralph_desk.mcp_server.**", "ralph_desk.companion.**", "ralph_desk.http_serving"},
    ),
    "SQLAlchemy": (["sqlalchemy", "alembic"], {"ralph_desk.store.**"}),
}


def contracts() -> list[dict[str, Any]]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def layers_contract() -> dict[str, Any]:
    (contract,) = (c for c in contracts() if c["type"] == "layers" and c.get("containers") == ["ralph_desk"])
    return contract


def top_level_modules() -> set[str]:
    return {info.name for info in pkgutil.iter_modules(ralph_desk.__path__)}


def test_every_top_level_module_of_the_package_has_a_layer() -> None:
    layered = {name.strip() for layer in layers_contract()["layers"] for name in layer.split("|")}
    missing = top_level_modules() - layered
    assert not missing, f"place these modules in a layer of pyproject.toml's layers contract: {missing}"


def test_the_layers_contract_refuses_a_module_it_does_not_name() -> None:
    assert layers_contract()["exhaustive"] is True
    assert not layers_contract().get("exhaustive_ignores")


def test_the_layers_contract_names_no_module_that_is_gone() -> None:
    layered = {name.strip() for layer in layers_contract()["layers"] for name in layer.split("|")}
    assert layered <= top_level_modules()


@pytest.mark.parametrize("fence", sorted(FENCES))
def test_each_fence_forbids_its_packages_to_the_whole_package_but_one_place(fence: str) -> None:
    forbidden, allowed = FENCES[fence]
    (contract,) = (c for c in contracts() if c["type"] == "forbidden" and c["forbidden_modules"] == forbidden)
    assert contract["source_modules"] == ["ralph_desk"]
    assert contract["allow_indirect_imports"] is True  # app -> gui -> PySide6 is how the window starts
    ignored = contract.get("ignore_imports", [])
    assert {expression.split(" -> ")[0] for expression in ignored} == allowed
    assert {expression.split(" -> ")[1] for expression in ignored} <= set(forbidden)


def test_the_private_names_contract_is_registered_over_the_whole_package() -> None:
    (contract,) = (c for c in contracts() if c["type"] == "private_names")
    assert contract["containers"] == ["ralph_desk"]


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            "from ralph_desk.loop.runner import _next_plan\n",
            ["from ralph_desk.loop.runner import _next_plan"],
        ),
        ("from . import _helpers\n", ["from . import _helpers"]),
        ("runner._wake.set()\n", ["runner._wake"]),
        ("self.runner._ending\n", ["self.runner._ending"]),
        ("server._lowlevel_server\n", ["server._lowlevel_server"]),
        ("self._wake.set()\ncls._cache\n", []),
        ("row._mapping\nobj.__class__\n", []),
        ("from x import __version__\n", []),
    ],
)
def test_the_private_names_check_finds_a_reach_into_another_module(source: str, found: list[str]) -> None:
    assert [what for _, what in private_uses(source, frozenset({"_mapping"}))] == found


def test_the_git_runner_is_protected_for_the_whole_package_but_vcs() -> None:
    (contract,) = (c for c in contracts() if c["type"] == "protected")
    assert (contract["protected_modules"], contract["allowed_importers"]) == (
        ["ralph_desk.vcs.run"],
        ["ralph_desk.vcs"],
    )
    assert not contract.get("ignore_imports")


def _starts_git(node: ast.AST) -> bool:
    """A `["git", …]` argument list, or a call whose first argument is "git" (`create_subprocess_exec`…)."""
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        first = node.elts[0]
    elif isinstance(node, ast.Call) and node.args:
        first = node.args[0]
    else:
        return False
    return isinstance(first, ast.Constant) and first.value == "git"


def test_no_module_outside_vcs_starts_git() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if PACKAGE / "vcs" not in path.parents
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _starts_git(node)
    ]
    assert not found, f"git runs only under ralph_desk/vcs/ (through vcs.run); move these there: {found}"


def test_the_git_check_sees_a_git_process() -> None:
    started = ast.parse('subprocess.run(["git", "status"]); shutil.which("git")')
    assert sum(map(_starts_git, ast.walk(started))) == 2
