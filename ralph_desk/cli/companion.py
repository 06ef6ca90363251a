"""The `companion` command (turn the companion page on or off, pair, list and revoke devices), and the
page `ralph-desk run` serves beside its loop while the companion is on."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from ralph_desk.cli.command import Command, project_services
from ralph_desk.cli.errors import EXIT_OK, PROG, UsageError
from ralph_desk.cli.output import table

if TYPE_CHECKING:  # asyncio, the loop and the web stack load only when a command needs them
    import asyncio

    from ralph_desk.companion.host import CompanionHost
    from ralph_desk.companion.switch import LoopView
    from ralph_desk.domain.records import Device
    from ralph_desk.loop.runner import LoopRunner
    from ralph_desk.project.companion_home import CompanionHome, CompanionSettings
    from ralph_desk.services.companion import PairingCode
    from ralph_desk.services.container import Services

ACTIONS = ("on", "off", "status", "pair", "devices", "revoke")
HELD_STATES = ("paused",)
QR_PROBE = "\u2580\u2584\u2588"


# --- the loop of `ralph-desk run`, as the page sees it ---------------------------------------------


class RunnerSwitch:
    """A `LoopSwitch` over the runner of `ralph-desk run` (called on its event loop)."""

    def __init__(self, runner: LoopRunner, task: asyncio.Task[Any]) -> None:
        self.runner = runner
        self.task = task

    def view(self) -> LoopView:
        """The runner's state."""
        from ralph_desk.companion.switch import LoopView

        status = self.runner.status
        held = self.runner.state.pause_requested or status.state.value in HELD_STATES
        return LoopView(
            state=status.state.value.replace("_", " "),
            detail=status.stop_reason or "",
            running=not self.task.done(),
            paused=held,
            current_task_id=status.current_task_id,
        )

    def pause(self) -> None:
        """Hold the loop after the current sessions (at once while it waits for work)."""
        self.runner.pause()
        if self.runner.status.state.value in ("waiting", "rate_limited"):
            self.runner.wake()

    def resume(self) -> None:
        """Go on."""
        self.runner.resume()

    def stop(self) -> None:
        """Stop now: the agents end and their tasks go back to pending (as Ctrl+C)."""
        self.runner.stop()


class ServedBeside:
    """The companion page served beside `ralph-desk run`'s loop, its address and a code printed."""

    def __init__(self, services: Services, home: CompanionHome, settings: CompanionSettings, as_json: bool):
        self.services = services
        self.home = home
        self.settings = settings
        self.as_json = as_json
        self.host: CompanionHost | None = None

    async def start(self, runner: LoopRunner, task: asyncio.Task[Any]) -> None:
        """Serve the page with this run's loop; a failure is said, and the loop runs without it."""
        import asyncio

        from ralph_desk.companion.host import CompanionHost

        title = await asyncio.to_thread(lambda: self.services.project.get().title)
        host = CompanionHost(self.services, self.home, self.settings, RunnerSwitch(runner, task), title)
        try:
            await host.start()
        except Exception as error:  # the loop is the run's job: it goes on without the page
            where = f"{self.settings.host}:{self.settings.port}"
            message = f"could not serve the companion page on {where}: {error}; the loop runs without it"
            print(f"{PROG}: {message}", file=sys.stderr, flush=True)
            return
        self.host = host
        code = await asyncio.to_thread(host.new_code)
        if self.as_json:
            shown = {"event": "companion", "url": host.url, "fingerprint": host.fingerprint}
            print(json.dumps({**shown, **_code_fields(host, code)}), flush=True)
            return
        print(f"Companion page: {host.url}", flush=True)
        print(f"Certificate fingerprint (SHA-256): {host.fingerprint}", flush=True)
        _print_code(host, code, sys.stdout)

    async def stop(self) -> None:
        """Stop serving."""
        if self.host is not None:
            await self.host.stop()
            self.host = None


def served_beside(services: Services, as_json: bool) -> ServedBeside | None:
    """The page to serve beside `ralph-desk run` when the companion is on for the project (else None)."""
    from ralph_desk.project.companion_home import CompanionHome

    home = CompanionHome.of(services.paths)
    settings, problem = home.read_settings()
    if problem:
        print(f"{PROG}: {problem}", file=sys.stderr, flush=True)
    return ServedBeside(services, home, settings, as_json) if settings.enabled else None


def _code_fields(host: CompanionHost, code: PairingCode) -> dict[str, str]:
    return {"code": code.shown, "link": host.pairing_link(code), "expires": code.expires_at.isoformat()}


def _print_code(host: CompanionHost, code: PairingCode, out: TextIO) -> None:
    """The pairing link, the code, its expiry and the QR code (in the terminal) of the link."""
    import segno

    link = host.pairing_link(code)
    out.write(f"Pairing link: {link}\n")
    out.write(f"Pairing code: {code.shown} (works once, until {code.expires_at.astimezone():%H:%M:%S})\n")
    qr = segno.make(link)
    encoding = getattr(out, "encoding", None) or "ascii"
    try:
        QR_PROBE.encode(encoding)
        qr.terminal(out=out, compact=True)
    except (UnicodeEncodeError, LookupError):
        qr.terminal(out=out)
    out.flush()


# --- the command ------------------------------------------------------------------------------


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a port from 1 to 65535")
    return port


def _configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `companion`."""
    parser.add_argument(
        "action",
        metavar="ACTION",
        choices=ACTIONS,
        help="on, off, status, pair (a one-time code and its QR), devices, revoke DEVICE_ID",
    )
    parser.add_argument("device_id", metavar="DEVICE_ID", nargs="?", type=int, help="revoke: the device")
    parser.add_argument(
        "--address",
        default="127.0.0.1",
        help="on: one of this computer's addresses (default 127.0.0.1: for your own SSH/VPN tunnel)",
    )
    parser.add_argument("--port", type=_port, default=None, help="on: the port (default 47800)")
    parser.add_argument(
        "--all-interfaces",
        action="store_true",
        help="on: allow 0.0.0.0 or :: (every interface: any network this computer is on can reach it)",
    )


def _run(args: argparse.Namespace) -> int:
    """Carry out `companion ACTION`."""
    from ralph_desk.project.companion_home import CompanionHome

    if args.action != "revoke" and args.device_id is not None:
        raise UsageError(f"`companion {args.action}` takes no DEVICE_ID; only `companion revoke DEVICE_ID`")
    if args.action == "revoke" and args.device_id is None:
        raise UsageError("`companion revoke` needs the DEVICE_ID to revoke (see `companion devices`)")
    with project_services(args) as services:
        home = CompanionHome.of(services.paths)
        settings, problem = home.read_settings()
        if problem:
            print(f"{PROG}: {problem}", file=sys.stderr)
        if args.action == "on":
            return _turn_on(args, home, settings)
        if args.action == "off":
            home.save(replace(settings, enabled=False))
            print("The companion page is off for this project: no port opens for it.")
            return EXIT_OK
        if args.action == "status":
            return _status(services, home, settings)
        if args.action == "pair":
            return _pair(services, home, settings)
        companion = services.companion(home.secret())
        if args.action == "devices":
            _print_devices(companion.devices())
            return EXIT_OK
        device = companion.revoke(args.device_id)
        print(f"Revoked device #{device.id} ({device.name}): the companion page refuses it from now on.")
        return EXIT_OK


def _turn_on(args: argparse.Namespace, home: CompanionHome, settings: CompanionSettings) -> int:
    from ralph_desk.project.companion_addresses import address_problem, note_for

    problem = address_problem(args.address, args.all_interfaces)
    if problem:
        raise UsageError(problem)
    chosen = replace(settings, enabled=True, host=args.address, port=args.port or settings.port)
    home.save(chosen)
    print(f"The companion page is on for this project, at {_url(chosen)}")
    print(f"  {note_for(chosen.host, chosen.port)}")
    print("  It is served while the window or `ralph-desk run` has the project open.")
    print("  Pair a phone: `ralph-desk companion pair` (or File › Companion… in the window).")
    return EXIT_OK


def _url(settings: CompanionSettings) -> str:
    from ralph_desk.companion.host import link_authority

    return f"https://{link_authority(settings)}/"


def _status(services: Services, home: CompanionHome, settings: CompanionSettings) -> int:
    print(f"Companion page: {'on' if settings.enabled else 'off'}")
    if settings.enabled and settings.problem():
        print(f"It cannot be served: {settings.problem()}")
    elif settings.enabled:
        from ralph_desk.companion.host import CompanionHost

        host = CompanionHost(services, home, settings)
        print(f"Address: {host.url}")
        print(f"Certificate fingerprint (SHA-256): {host.served_certificate().fingerprint}")
    _print_devices(services.companion(home.secret()).devices())
    return EXIT_OK


def _pair(services: Services, home: CompanionHome, settings: CompanionSettings) -> int:
    from ralph_desk.companion.host import CompanionHost

    if not settings.enabled:
        raise UsageError(
            "the companion page is off for this project; turn it on first: "
            "`ralph-desk companion on --address ADDRESS`"
        )
    host = CompanionHost(services, home, settings)
    code = host.new_code()
    print(f"Companion page: {host.url}")
    print(f"Certificate fingerprint (SHA-256): {host.served_certificate().fingerprint}")
    _print_code(host, code, sys.stdout)
    print("The window or `ralph-desk run` serving this project accepts it.")
    return EXIT_OK


def _print_devices(devices: list[Device]) -> None:
    if not devices:
        print("Paired devices: none")
        return
    print("Paired devices:")
    rows: list[tuple[str, ...]] = [("ID", "NAME", "PAIRED", "LAST USE", "REVOKED")]
    for device in devices:
        rows.append(
            (
                str(device.id),
                device.name,
                f"{device.paired_at:%Y-%m-%d %H:%M}",
                f"{device.last_used_at:%Y-%m-%d %H:%M}" if device.last_used_at else "never",
                f"{device.revoked_at:%Y-%m-%d %H:%M}" if device.revoked_at else "-",
            )
        )
    print("\n".join(table(rows)))


COMPANION = Command(
    "companion",
    "turn the companion page (answer from your phone) on or off, pair a phone, list or revoke devices",
    _configure,
    _run,
)
