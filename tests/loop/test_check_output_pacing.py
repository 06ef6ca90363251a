"""A check's output reaches the event loop paced: a piece per spacing, whatever the rate, none lost."""

from __future__ import annotations

import threading

from ralph_desk.loop.check_gate import OutputPacer

WAIT_S = 5.0


def test_thousands_of_lines_go_out_as_a_few_pieces_in_order_and_none_is_lost() -> None:
    sent: list[tuple[str, str]] = []
    pacer = OutputPacer(lambda name, text: sent.append((name, text)), spacing_s=10.0)

    for number in range(10_000):
        pacer.heard("tests", f"line {number}\n")
    pacer.heard("lint", "clean\n")
    pacer.flush()

    assert len(sent) == 3  # the first at once, the rest of tests when lint began, lint at the end
    assert "".join(text for name, text in sent if name == "tests") == "".join(
        f"line {n}\n" for n in range(10_000)
    )
    assert sent[-1] == ("lint", "clean\n")


def test_what_waits_goes_out_on_its_own_when_nothing_more_comes() -> None:
    arrived = threading.Event()
    sent: list[str] = []

    def emit(_name: str, text: str) -> None:
        sent.append(text)
        if len(sent) == 2:
            arrived.set()

    pacer = OutputPacer(emit, spacing_s=0.05)
    pacer.heard("tests", "collecting\n")
    pacer.heard("tests", "running 3 tests\n")  # within the spacing: waits, then goes out by itself

    assert arrived.wait(WAIT_S)
    assert sent == ["collecting\n", "running 3 tests\n"]
