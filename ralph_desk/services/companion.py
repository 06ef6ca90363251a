"""Pairing the companion page (DESIGN §14): one-time codes, paired devices, their tokens (kept hashed)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ralph_desk.domain.records import Device
from ralph_desk.services.errors import InvalidValueError, NotFoundError, ServiceError
from ralph_desk.store import companion as store
from ralph_desk.store.database import Database

CODE_LIFETIME = timedelta(minutes=5)
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a screen, typed on a phone
CODE_LENGTH = 8
NAME_LIMIT = 60
TOKEN_BYTES = 32


class PairingRefused(ServiceError):
    """A pairing code that is wrong, used already or expired (which one is not told: it would help guess)."""

    def __init__(self) -> None:
        super().__init__(
            "this pairing code is not valid: it is wrong, was used already, or is over five minutes old"
        )


@dataclass(frozen=True)
class PairingCode:
    """A one-time code shown in the window (and in the QR code), valid until `expires_at`."""

    code: str
    expires_at: datetime

    @property
    def shown(self) -> str:
        """The code as people read it: two groups of four."""
        return f"{self.code[:4]}-{self.code[4:]}"


@dataclass(frozen=True)
class PairedDevice:
    """A device just paired and the token it presents from now on (shown once, never stored)."""

    device: Device
    token: str


def normalised_code(text: str) -> str:
    """A typed code as issued: upper case, without the dash and spaces people add."""
    return "".join(ch for ch in text.upper() if ch not in "- \t")


def device_name(text: str) -> str:
    """A device name: printable, one line, at most NAME_LIMIT characters (refused otherwise)."""
    name = " ".join(text.split())
    if not name or len(name) > NAME_LIMIT or any(unicodedata.category(ch)[0] == "C" for ch in name):
        raise InvalidValueError("device name", text, f"1 to {NAME_LIMIT} printable characters on one line")
    return name


class CompanionService:
    """Codes and devices of one project; `secret` (the person's, outside the project) keys every hash."""

    def __init__(self, db: Database, secret: bytes) -> None:
        self.db = db
        self._secret = secret

    def _hash(self, kind: str, value: str) -> str:
        return hmac.new(self._secret, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()

    def issue_code(self, now: datetime | None = None) -> PairingCode:
        """A new one-time pairing code, valid for five minutes."""
        now = now or datetime.now(UTC)
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        expires_at = now + CODE_LIFETIME
        with self.db.write() as unit:
            store.add_code(unit, self._hash("code", code), now, expires_at)
        return PairingCode(code, expires_at)

    def newest_code_at(self) -> datetime | None:
        """When the newest pairing code was made, by any process."""
        with self.db.read() as unit:
            made = store.newest_code_created(unit, datetime.now(UTC))
        return made.replace(tzinfo=UTC) if made is not None else None

    def pair(self, code: str, name: str, now: datetime | None = None) -> PairedDevice:
        """Use `code` (once) to pair a device called `name`; raises PairingRefused for a bad code."""
        name = device_name(name)
        typed = normalised_code(code)
        if len(typed) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in typed):
            raise PairingRefused()
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self.db.write() as unit:
            if store.live_name_taken(unit, name):  # decisions are recorded by name: one name, one device
                raise InvalidValueError(
                    "device name", name, "a name no paired device has (revoke the old one, or pick another)"
                )
            device = store.redeem(
                unit, self._hash("code", typed), name, self._hash("token", token), now or datetime.now(UTC)
            )
        if device is None:
            raise PairingRefused()
        return PairedDevice(device, token)

    def device_for(self, token: str, now: datetime | None = None) -> Device | None:
        """The live device presenting `token` (its last use noted), or None: unknown or revoked."""
        if not token or len(token) > 200:
            return None
        token_hash = self._hash("token", token)
        with self.db.read() as unit:
            device = store.device_by_token(unit, token_hash)
        if device is None:
            return None
        now = now or datetime.now(UTC)
        last = device.last_used_at.replace(tzinfo=UTC) if device.last_used_at is not None else None
        if last is None or now - last >= store.LAST_USE_STEP:  # every request reads; few need to write
            with self.db.write() as unit:
                store.mark_used(unit, device.id, now)
        return device

    def devices(self) -> list[Device]:
        """Every paired device, revoked ones too, newest first."""
        with self.db.read() as unit:
            return store.devices(unit)

    def live_devices(self) -> list[Device]:
        """The devices not revoked."""
        return [device for device in self.devices() if device.revoked_at is None]

    def revoke(self, device_id: int) -> Device:
        """Revoke a device: its token is refused from its next request on."""
        with self.db.write() as unit:
            device = store.revoke(unit, device_id, datetime.now(UTC))
            if device is None:
                known = [known.id for known in store.devices(unit)]
                raise NotFoundError("device", device_id, known)
        return device
