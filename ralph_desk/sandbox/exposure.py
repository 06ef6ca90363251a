"""What a confined command needs from the folders the sandbox hides: its program, interpreter and files.

A person's agent CLI, Python environment or Node often lives in their home (`~/.local`, `~/.nvm`, a
virtual environment) or under /tmp; hiding those folders would hide the program itself. Each program
the command names is shown again read-only — its install folder, not the rest of the home.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

SHEBANG_LIMIT = 256
# Where version managers and language installers keep toolchains in a home: shown read-only, so that a
# check's `pytest` or `npm test` finds its interpreter. None holds a person's credentials (Cargo's sit in
# ~/.cargo, of which only bin/ is shown).
TOOLCHAINS = (
    ".pyenv", ".nvm", ".volta", ".asdf", ".rbenv", ".sdkman", ".cargo/bin", ".rustup", ".deno", ".bun",
    ".local/bin", ".local/lib", ".local/pipx", ".local/share/pnpm", ".local/share/uv", ".npm-global",
    "go/bin", ".go", ".ghcup", ".elan", ".juliaup", ".nix-profile", "miniconda3", "anaconda3", "miniforge3",
    ".conda", ".linuxbrew",
)  # fmt: skip
DESK_PACKAGE = Path(__file__).resolve().parent.parent  # ralph_desk itself: the demo's agent runs it


def needed(argv: Sequence[str], hidden: Iterable[Path], search_path: str | None = None) -> tuple[Path, ...]:
    """The folders under `hidden` that `argv` needs to read: its program's, its interpreter's, its files'."""
    roots = [Path(os.path.realpath(folder)) for folder in hidden]
    found: list[Path] = []
    programs = [Path(argv[0]), *_interpreter(Path(argv[0]), search_path)] if argv else []
    for program in programs:
        for path in (program, Path(os.path.realpath(program))):
            found += [_install_folder(path), path.parent, path]  # the widest that is not a hidden root
    named = [Path(word) for word in argv[1:] if _names_path(word)]
    found += [folder for path in named for folder in (path, path.parent)]
    found += [_install_folder(DESK_PACKAGE / "__init__.py").parent]
    return _under(found, roots)


def toolchains(home: Path, search_path: str | None) -> tuple[Path, ...]:
    """The toolchain folders in `home` a confined command may run programs from: the known ones and each
    folder of PATH inside it (with the install folder around it)."""
    found = [home / name for name in TOOLCHAINS]
    for entry in (search_path or "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            for folder in (Path(entry), Path(os.path.realpath(entry))):
                found += [_install_folder(folder / "program"), folder]
    return _under(found, [Path(os.path.realpath(home))])


def _names_path(word: str) -> bool:
    return os.path.isabs(word) and os.path.exists(word)


def _install_folder(program: Path) -> Path:
    """The folder a program was installed with: a Node package tree, a `bin`'s prefix, else its folder."""
    parts = program.parts
    if "node_modules" in parts:  # everything the package requires sits beside it
        return Path(*parts[: parts.index("node_modules") + 1]).parent
    folder = program.parent
    return folder.parent if folder.name in ("bin", "Scripts") else folder


def _interpreter(program: Path, search_path: str | None) -> list[Path]:
    """The interpreter a script names on its `#!` line (`/usr/bin/env node` looked up on PATH)."""
    try:
        with program.open("rb") as file:
            head = file.read(SHEBANG_LIMIT)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return []
    if Path(words[0]).name == "env" and len(words) > 1:
        named = [word for word in words[1:] if not word.startswith("-")]
        found = shutil.which(named[0], path=search_path) if named else None
        return [Path(found)] if found else []
    return [Path(words[0])]


def _under(paths: Iterable[Path], roots: Sequence[Path]) -> tuple[Path, ...]:
    """The paths inside a hidden root (never a root itself: that would show all of it), each once,
    outermost first (inner ones are already shown by it)."""
    chosen: list[Path] = []
    for path in sorted({Path(os.path.realpath(path)) for path in paths}, key=lambda p: len(p.parts)):
        inside_hidden = any(root in path.parents for root in roots)
        outer = not any(kept == path or kept in path.parents for kept in chosen)
        if inside_hidden and path.exists() and outer:
            chosen.append(path)
    return tuple(chosen)
