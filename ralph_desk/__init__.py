"""ralph_desk: a desktop app for running a Ralph loop of coding agents and reviewing what they signal."""

from pathlib import Path

__version__ = "0.1.0"


def resource_dir() -> Path:
    """The `resources/` folder: inside the installed package, else beside it in the source tree."""
    package = Path(__file__).resolve().parent
    for candidate in (package / "resources", package.parent / "resources"):
        if (candidate / "icons").is_dir():
            return candidate
    raise FileNotFoundError(f"no resources/icons folder near {package}")
