"""Trust on first use: which agent programs a person allowed per project, kept outside every project."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ralph_desk.project import contained
from ralph_desk.project.errors import ProjectError

TRUST_FILE_ENV = "RALPH_DESK_TRUST_FILE"  # another place for the trust file (tests, a portable setup)
TRUST_FILE_MODE = 0o600
TRUST_FOLDER_MODE = 0o700


def trust_file() -> Path:
    """Where this computer keeps the trusted fingerprints: `$RALPH_DESK_TRUST_FILE`, else the config dir."""
    given = os.environ.get(TRUST_FILE_ENV, "").strip()
    if given:
        return Path(given).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_config_dir("ralph-desk")) / "trusted-commands.json"


def fingerprint(settings: Mapping[str, Any]) -> str:
    """The sha256 of the command-bearing settings, the same for the same settings whatever their order."""
    text = json.dumps({key: settings[key] for key in sorted(settings)}, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key(root: Path) -> str:
    return str(root.resolve())


def _read(path: Path) -> dict[str, str]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProjectError(
            f"{path}: cannot read the trusted agent commands: {error}; "
            f"remove the file (every project's agent command is then asked about again)"
        ) from None
    if not isinstance(raw, dict):
        return {}
    return {str(root): str(value) for root, value in raw.items() if isinstance(value, str)}


def is_trusted(root: Path, print_: str) -> bool:
    """Whether the person allowed the settings with this fingerprint for the project at `root`."""
    return _read(trust_file()).get(_key(root)) == print_


def record(root: Path, print_: str) -> Path:
    """Remember that the person allowed these settings for `root` (written at once, owner-only); the file."""
    path = trust_file()
    trusted = _read(path)
    if trusted.get(_key(root)) == print_:
        return path
    trusted[_key(root)] = print_
    text = json.dumps(trusted, indent=2, sort_keys=True) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=TRUST_FOLDER_MODE)
        return contained.write_text(
            path.parent, path, text, mode=TRUST_FILE_MODE, folder_mode=TRUST_FOLDER_MODE
        )
    except OSError as error:
        raise ProjectError(f"{path}: cannot record the trusted agent command: {error}") from None
