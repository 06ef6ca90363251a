"""Pairing the companion page: one-time codes, hashed tokens, revocation (DESIGN §14)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from ralph_desk.services.companion import CODE_LIFETIME, CompanionService, PairingRefused
from ralph_desk.services.errors import InvalidValueError, NotFoundError
from ralph_desk.store.database import Database
from ralph_desk.store.schema import CompanionCodeRow, CompanionDeviceRow

SECRET = b"k" * 32


@pytest.fixture
def companion(db: Database) -> CompanionService:
    return CompanionService(db, SECRET)


def test_a_code_pairs_one_device_once_and_its_token_names_it(
    companion: CompanionService, db: Database
) -> None:
    code = companion.issue_code()
    paired = companion.pair(code.shown.lower(), "  Ana's   phone ")
    assert paired.device.name == "Ana's phone"
    assert companion.device_for(paired.token) == paired.device
    with pytest.raises(PairingRefused):
        companion.pair(code.code, "Second phone")
    with db.read() as unit:
        stored = [*unit.session.scalars(select(CompanionDeviceRow.token_hash))]
        codes = [*unit.session.scalars(select(CompanionCodeRow.code_hash))]
    assert stored and paired.token not in stored[0] and code.code not in codes[0]  # kept hashed only


def test_an_expired_or_wrong_code_is_refused_and_pairs_nothing(companion: CompanionService) -> None:
    then = datetime.now(UTC) - CODE_LIFETIME - timedelta(seconds=1)
    old = companion.issue_code(now=then)
    with pytest.raises(PairingRefused):
        companion.pair(old.code, "Phone")
    with pytest.raises(PairingRefused):
        companion.pair("ZZZZ-ZZZZ", "Phone")
    with pytest.raises(PairingRefused):
        companion.pair("'; DROP TABLE companion_devices; --", "Phone")
    assert companion.devices() == []


def test_a_revoked_device_is_refused_and_unknown_ids_are_named(companion: CompanionService) -> None:
    paired = companion.pair(companion.issue_code().code, "Phone")
    revoked = companion.revoke(paired.device.id)
    assert revoked.revoked_at is not None
    assert companion.device_for(paired.token) is None
    with pytest.raises(NotFoundError, match=f"no device 99; known: {paired.device.id}"):
        companion.revoke(99)


def test_a_token_hashed_under_another_secret_names_nothing(companion: CompanionService, db: Database) -> None:
    paired = companion.pair(companion.issue_code().code, "Phone")
    assert CompanionService(db, b"x" * 32).device_for(paired.token) is None  # a clone's rows cannot be forged


def test_a_device_name_must_be_one_printable_line(companion: CompanionService) -> None:
    code = companion.issue_code()
    for bad in ("", "   ", "a\x00b", "x" * 61):
        with pytest.raises(InvalidValueError, match="device name"):
            companion.pair(code.code, bad)
    assert companion.pair(code.code, "Phone").device.name == "Phone"  # refusals did not use the code


def test_two_live_devices_cannot_share_a_name_a_revoked_one_frees_it(companion: CompanionService) -> None:
    first = companion.pair(companion.issue_code().code, "Phone")
    code = companion.issue_code()
    with pytest.raises(InvalidValueError, match="a name no paired device has"):
        companion.pair(code.code, "phone")  # decisions are recorded by name: it must say which device
    companion.revoke(first.device.id)
    assert companion.pair(code.code, "Phone").device.name == "Phone"  # the refusal did not use the code
