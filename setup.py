"""Build hook: ship the top-level `resources/` folder inside the package as `ralph_desk/resources/`.

Everything else about the package is declared in pyproject.toml. In a checkout (and an editable
install) the window finds `resources/` beside the package; a wheel carries a copy inside it, where
`ralph_desk.resource_dir()` looks first (icons, the demo's story).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

RESOURCES = Path(__file__).resolve().parent / "resources"


class BuildWithResources(build_py):
    """`build_py` that also copies `resources/` into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout's resources/
            return
        target = Path(self.build_lib) / "ralph_desk" / "resources"
        if not (RESOURCES / "icons").is_dir():
            if (target / "icons").is_dir():  # the package carries its own resources/ (package data)
                return
            raise FileNotFoundError(f"{RESOURCES}/icons is missing: the wheel would have no icons")
        shutil.copytree(RESOURCES, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*"))


setup(cmdclass={"build_py": BuildWithResources})
