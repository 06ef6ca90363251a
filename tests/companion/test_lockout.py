"""Guessing pairing codes: counted per client before each code is checked, all clients together too."""

from __future__ import annotations

from ralph_desk.companion.lockout import ALL_WRONG_CODES, LOCKED_S, WRONG_CODES, PairingLockout


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_tries_sent_at_once_are_counted_before_any_is_checked() -> None:
    lockout = PairingLockout(Clock())
    started = [lockout.attempt("10.0.0.9") for _ in range(WRONG_CODES + 5)]  # none answered yet
    assert started[:WRONG_CODES] == [0.0] * WRONG_CODES
    assert all(locked > 0 for locked in started[WRONG_CODES:])


def test_one_client_s_wrong_codes_lock_that_client_only_and_the_lock_ends() -> None:
    clock = Clock()
    lockout = PairingLockout(clock)
    for _ in range(WRONG_CODES + 1):
        lockout.attempt("10.0.0.9")
    assert lockout.locked_for("10.0.0.9") == LOCKED_S
    assert lockout.attempt("10.0.0.7") == 0.0  # the person's phone pairs meanwhile
    clock.now += LOCKED_S
    assert lockout.attempt("10.0.0.9") == 0.0


def test_a_right_code_is_forgiven_and_many_clients_together_lock_everyone() -> None:
    lockout = PairingLockout(Clock())
    for _ in range(WRONG_CODES * 3):
        assert lockout.attempt("10.0.0.7") == 0.0
        lockout.forgive("10.0.0.7")  # right: not counted
    for number in range(ALL_WRONG_CODES + 1):
        lockout.attempt(f"10.0.{number // 8}.{number % 8}")  # a few tries from each of many clients
    assert lockout.locked_for("10.9.9.9") > 0
    lockout.reset()
    assert lockout.locked_for("10.9.9.9") == 0.0
