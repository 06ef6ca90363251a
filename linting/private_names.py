"""An import-linter contract: no module reaches into another's private (`_name`) parts.

A name with a leading underscore is its module's (or its class's) own business: another module may
neither import it nor read it off an object. Inside a class, `self._x` and `cls._x` are its own.
The few library names that are public despite the underscore (SQLAlchemy's `Row._mapping`) are
listed in `public_names`; a library's truly private part is reached from one compatibility module,
listed in `compat_modules`, where a test pins what it relies on.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

OWN = frozenset({"self", "cls"})


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str, public_names: frozenset[str] = frozenset()) -> Iterator[tuple[int, str]]:
    """Each `(line, what)` in `source` that imports or reads another module's or object's private name."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _is_private(alias.name) and alias.name not in public_names:
                    yield node.lineno, f"from {'.' * node.level}{node.module or ''} import {alias.name}"
        elif isinstance(node, ast.Attribute) and _is_private(node.attr) and node.attr not in public_names:
            if isinstance(node.value, ast.Name) and node.value.id in OWN:
                continue
            yield node.lineno, ast.unparse(node)


def _path_of(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin) if spec is not None and spec.origin and spec.origin.endswith(".py") else None


class PrivateNamesContract(Contract):
    """Modules of `containers` import and read no private name of another module or object."""

    containers = fields.ListField(subfield=fields.StringField())
    public_names = fields.ListField(subfield=fields.StringField(), required=False, default=[])
    compat_modules = fields.ListField(subfield=fields.StringField(), required=False, default=[])

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        public = frozenset(str(name) for name in self.public_names)  # type: ignore[attr-defined]
        compat = {str(module) for module in self.compat_modules}  # type: ignore[attr-defined]
        found: list[str] = []
        for container in self.containers:  # type: ignore[attr-defined]
            for module in sorted({str(container), *graph.find_descendants(str(container))}):
                path = _path_of(module)
                if module in compat or path is None:
                    continue
                source = path.read_text(encoding="utf-8")
                found.extend(f"{module}:{line} {what}" for line, what in private_uses(source, public))
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for line in check.metadata["found"]:
            output.print_error(f"{line}: a private name of another module or object")
