"""Companion queries: paired devices (their tokens hashed) and one-time pairing codes (hashed too)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update

from ralph_desk.domain.enums import ChangeTopic
from ralph_desk.domain.records import Device
from ralph_desk.store import mapping
from ralph_desk.store.database import UnitOfWork
from ralph_desk.store.schema import CompanionCodeRow, CompanionDeviceRow

TOPIC = ChangeTopic.COMPANION
LAST_USE_STEP = timedelta(minutes=1)
"""A device's last use is written at most this often: every request reads it, few need to write it."""
CODES_KEPT = timedelta(days=1)


def add_code(unit: UnitOfWork, code_hash: str, now: datetime, expires_at: datetime) -> None:
    """Record a new pairing code; codes that ended a day ago are dropped."""
    unit.execute(delete(CompanionCodeRow).where(CompanionCodeRow.expires_at < now - CODES_KEPT))
    unit.session.add(CompanionCodeRow(code_hash=code_hash, created_at=now, expires_at=expires_at))
    unit.session.flush()
    unit.touch(TOPIC)


def redeem(unit: UnitOfWork, code_hash: str, name: str, token_hash: str, now: datetime) -> Device | None:
    """Use a live code once, pairing a device with it; None when no unused, unexpired code matches."""
    code = unit.session.scalar(
        select(CompanionCodeRow)
        .where(
            CompanionCodeRow.code_hash == code_hash,
            CompanionCodeRow.used_at.is_(None),
            CompanionCodeRow.expires_at > now,
        )
        .with_for_update()
    )
    if code is None:
        return None
    stored = now.astimezone(UTC).replace(tzinfo=None)  # as the column reads back: naive UTC
    row = CompanionDeviceRow(name=name, token_hash=token_hash, paired_at=stored, last_used_at=stored)
    unit.session.add(row)
    unit.session.flush()
    code.used_at = now
    code.device_id = row.id
    unit.touch(TOPIC, row.id)
    return mapping.device(row)


def newest_code_created(unit: UnitOfWork, now: datetime) -> datetime | None:
    """When the newest pairing code was made (naive UTC), if any; a row dated after `now` is not believed."""
    return unit.session.scalar(
        select(func.max(CompanionCodeRow.created_at)).where(CompanionCodeRow.created_at <= now)
    )


def live_name_taken(unit: UnitOfWork, name: str) -> bool:
    """Whether a device not revoked is called `name` (letter case aside)."""
    found = unit.session.scalar(
        select(CompanionDeviceRow.id).where(
            func.lower(CompanionDeviceRow.name) == name.lower(), CompanionDeviceRow.revoked_at.is_(None)
        )
    )
    return found is not None


def device_by_token(unit: UnitOfWork, token_hash: str) -> Device | None:
    """The live (unrevoked) device a token hash names."""
    row = unit.session.scalar(
        select(CompanionDeviceRow).where(
            CompanionDeviceRow.token_hash == token_hash, CompanionDeviceRow.revoked_at.is_(None)
        )
    )
    return mapping.device(row) if row is not None else None


def mark_used(unit: UnitOfWork, device_id: int, now: datetime) -> None:
    """Note a device's use now, unless it was noted within the last minute."""
    result = unit.execute(
        update(CompanionDeviceRow)
        .where(
            CompanionDeviceRow.id == device_id,
            (CompanionDeviceRow.last_used_at.is_(None))
            | (CompanionDeviceRow.last_used_at < now - LAST_USE_STEP),
        )
        .values(last_used_at=now)
    )
    if result.rowcount:
        unit.touch(TOPIC, device_id)


def devices(unit: UnitOfWork) -> list[Device]:
    """Every paired device, revoked ones too, newest first."""
    rows = unit.session.scalars(select(CompanionDeviceRow).order_by(CompanionDeviceRow.id.desc()))
    return [mapping.device(row) for row in rows]


def revoke(unit: UnitOfWork, device_id: int, now: datetime) -> Device | None:
    """Revoke a device (its token is refused from now on); None when there is no such device."""
    row = unit.session.get(CompanionDeviceRow, device_id)
    if row is None:
        return None
    if row.revoked_at is None:
        row.revoked_at = now.astimezone(UTC).replace(tzinfo=None)
        unit.session.flush()
        unit.touch(TOPIC, device_id)
    return mapping.device(row)
