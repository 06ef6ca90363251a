"""Run a command confined, where this computer can: the command line and environment that do it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ralph_desk.sandbox import bubblewrap, seatbelt
from ralph_desk.sandbox.availability import BUBBLEWRAP, Availability
from ralph_desk.sandbox.exposure import needed
from ralph_desk.sandbox.policy import Confinement

# Doors out of the sandbox that the environment names: an agent for the person's keys, their desktop bus
# and screen. The sockets behind them are hidden with the home and /run/user; the names go too.
UNSET = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "KRB5CCNAME",
)
OFF = "the sandbox setting is off"


@dataclass(frozen=True)
class Confined:
    """A command as it is started: confined by `tool`, or (tool None) unconfined for `reason`."""

    argv: list[str]
    env: dict[str, str]
    unset: tuple[str, ...] = ()
    tool: str | None = None
    reason: str = ""
    network: bool = True

    @property
    def confined(self) -> bool:
        """Whether the command runs in a sandbox."""
        return self.tool is not None

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with this command's variables set and the unset ones gone."""
        merged = {**base, **self.env}
        return {key: value for key, value in merged.items() if key not in self.unset}


def unconfined(argv: Sequence[str], reason: str) -> Confined:
    """A command started as it is, with the reason it is not confined."""
    return Confined(list(argv), {}, reason=reason)


def confine(argv: Sequence[str], confinement: Confinement, found: Availability) -> Confined:
    """`argv` inside `confinement` with the sandbox `found`, or unconfined with its reason."""
    if found.program is None or found.tool is None:
        return unconfined(argv, found.reason)
    search_path = confinement.env.get("PATH", os.environ.get("PATH"))
    shown = needed(argv, (*confinement.hidden, Path("/tmp")), search_path)
    complete = replace(confinement, readable=(*confinement.readable, *shown))
    env = complete.environment()
    if found.tool == BUBBLEWRAP:
        words = bubblewrap.command(found.program, complete, argv)
        # Its /tmp is a private tmpfs already; a short path keeps Unix sockets under their 108-byte limit.
        env["TMPDIR"] = bubblewrap.PRIVATE_TMP
    else:
        words = seatbelt.command(found.program, complete, argv)
        _link_files(complete)
    return Confined(words, env, UNSET, found.tool, network=complete.network)


def _link_files(confinement: Confinement) -> None:
    """Seatbelt has no bind mounts: a file shown in the private home is a link to the person's (allowed)."""
    for binding in confinement.files:
        binding.target.parent.mkdir(parents=True, exist_ok=True)
        if not binding.target.exists() and not binding.target.is_symlink():
            binding.target.symlink_to(binding.source)
