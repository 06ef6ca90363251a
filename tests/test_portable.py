"""Every module of the package imports without the modules that exist on POSIX only (as on Windows)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ralph_desk

PACKAGE = Path(ralph_desk.__file__).parent
POSIX_ONLY = (
    "fcntl",
    "termios",
    "tty",
    "pty",
    "pwd",
    "grp",
    "resource",
    "syslog",
    "posix",
    "_posixsubprocess",
)
# Alembic runs these scripts with its own context: they are not importable as plain modules.
NOT_MODULES = ("ralph_desk.store.migrations.env", "ralph_desk.store.migrations.versions.")

# Pass one imports everything as usual, so that the libraries underneath are loaded with their own
# platform checks; pass two imports ralph_desk's modules again with the POSIX-only modules gone.
IMPORT_ALL = """
import importlib, json, sys
names = json.loads(sys.argv[1])
for name in names:
    importlib.import_module(name)
for name in names:
    sys.modules.pop(name, None)
for name in json.loads(sys.argv[2]):
    sys.modules[name] = None  # `import name` now raises ImportError
failed = {}
for name in names:
    try:
        importlib.import_module(name)
    except ImportError as error:
        failed[name] = str(error)
print(json.dumps(failed))
"""


def package_modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not name.startswith(NOT_MODULES):
            names.append(name)
    return names


def test_every_module_imports_without_the_posix_only_modules() -> None:
    names = package_modules()
    assert "ralph_desk.loop.lock" in names and "ralph_desk.process_tree" in names

    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, json.dumps(names), json.dumps(POSIX_ONLY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}


def test_a_module_that_imports_a_posix_only_module_at_its_top_is_found(tmp_path: Path) -> None:
    probe = tmp_path / "posix_probe.py"
    probe.write_text("import fcntl\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL, json.dumps(["posix_probe"]), json.dumps(POSIX_ONLY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "posix_probe" in json.loads(done.stdout)
