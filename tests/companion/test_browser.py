"""The companion page in a real browser at 390×844 (Debian's chromium through Playwright): pairing, the
decisions of issue 25's Done-when, Undo, live updates that keep a half-typed note, and a phone's layout."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from ralph_desk.domain.enums import ReviewCommentState, ReviewDecision, TaskStatus
from ralph_desk.loop.model import LoopSettings
from ralph_desk.loop.preview import preview_next_session
from tests.companion import inbox_items as items
from tests.companion.conftest import Served
from tests.companion.phone import Phone, browser, needs_chromium, open_phone
from tests.support.review_project import task_in_review

pytestmark = needs_chromium
__all__ = ["browser"]  # the module's fixture, used by name

LONG_LINE = "    return " + " + ".join(f"'part {n}'" for n in range(40)) + "\n"


@pytest.fixture
def phone(browser: Browser, served: Served) -> Iterator[Phone]:
    """A paired phone on a project with feature `core` and discipline `backend`; its console stays clean."""
    items.with_feature(served.services)
    shown = open_phone(browser, served)
    yield shown
    shown.page.context.close()
    assert shown.problems == []


def test_pairing_with_the_code_typed_in_the_form_opens_the_inbox(phone: Phone) -> None:
    phone.pair("Ana's phone")

    expect(phone.page.locator("h1")).to_have_text("Inbox")
    expect(phone.page.locator(".who")).to_have_text("Ana's phone")


def test_the_pairing_link_fills_in_the_code_and_takes_it_out_of_the_address_bar(
    phone: Phone, served: Served
) -> None:
    made = served.code()
    code = made.code
    link = served.host.pairing_link(made)  # what the QR code holds: the code and the certificate
    phone.go(link.removeprefix(served.url))

    expect(phone.page.locator("#pair-code")).to_have_value(code)
    expect(phone.page.locator("#pair-fingerprint code")).to_have_text(served.host.fingerprint)
    assert "#" not in phone.page.url
    phone.page.fill("input[name=name]", "Tablet")
    phone.page.click("button[type=submit]")
    phone.page.wait_for_url(served.url + "/")
    expect(phone.page.locator(".who")).to_have_text("Tablet")


def test_answering_a_blocking_question_puts_the_task_back_with_the_answer_in_its_next_prompt(
    phone: Phone, served: Served
) -> None:
    task, ask = items.blocked_on_question(served.services)
    phone.pair()
    card = phone.page.locator(f"#ask-{ask.id}-card")
    card.locator("textarea[name=note]").fill("With one decimal.")

    card.get_by_role("button", name="★ metres").click()

    expect(phone.page.locator("#held")).to_contain_text(f"Answered question #{ask.id}")
    expect(phone.page.locator(".notice")).to_contain_text(f"Answered question #{ask.id}")
    assert served.services.tasks.get(task.id).status is TaskStatus.PENDING
    preview = preview_next_session(served.services, LoopSettings(), served.root)
    assert preview is not None and preview.task_id == task.id
    assert "ANSWER to your question 'Metres or feet?': metres" in preview.prompt
    assert "With one decimal." in preview.prompt


def test_approving_a_suggestion_makes_its_task_pending(phone: Phone, served: Served) -> None:
    suggestion = items.suggested(served.services)
    phone.pair()

    phone.page.locator(f"#suggestion-{suggestion.id}-card").get_by_role("button", name="Approve").click()

    expect(phone.page.locator(".notice")).to_contain_text("Approved task #")
    reviewed = served.services.signals.get(suggestion.id)
    assert reviewed.review_decision is ReviewDecision.APPROVED and reviewed.created_task_id is not None
    assert served.services.tasks.get(reviewed.created_task_id).status is TaskStatus.PENDING


def test_undo_takes_a_decision_back_before_it_is_sent(phone: Phone, served: Served) -> None:
    suggestion = items.suggested(served.services)
    task, ask = items.blocked_on_question(served.services)
    phone.pair()
    suggestion_card = phone.page.locator(f"#suggestion-{suggestion.id}-card")
    suggestion_card.get_by_role("button", name="Approve").click()
    expect(suggestion_card).to_have_class("card held")

    phone.page.get_by_role("button", name="Undo").click()

    expect(suggestion_card).to_have_class("card")
    expect(phone.page.locator("#held")).to_be_hidden()
    # A later decision would send a held one first (one at a time, as at the desk): it was let go.
    phone.page.locator(f"#ask-{ask.id}-card").get_by_role("button", name="feet").click()
    expect(phone.page.locator(".notice")).to_contain_text(f"Answered question #{ask.id}")
    assert served.services.tasks.get(task.id).status is TaskStatus.PENDING
    kept = served.services.signals.get(suggestion.id)
    assert kept.review_decision is ReviewDecision.PENDING and kept.created_task_id is None


def test_a_question_answered_at_the_desk_meanwhile_is_refused_on_the_page_and_the_note_kept(
    phone: Phone, served: Served
) -> None:
    _, ask = items.blocked_on_question(served.services)
    phone.pair()
    card = phone.page.locator(f"#ask-{ask.id}-card")
    card.locator("textarea[name=note]").fill("For the US office")
    card.get_by_role("button", name="feet").click()

    served.services.inbox.answer(ask.id, "metres")  # the desk answered while the page held its answer

    expect(phone.page.locator(".error")).to_contain_text(f"ask {ask.id} was already answered")
    expect(phone.page.locator(".kept textarea")).to_have_value("For the US office")
    assert served.services.signals.get(ask.id).answer == "metres"


def test_a_half_typed_note_survives_a_live_update_of_the_page(phone: Phone, served: Served) -> None:
    _, ask = items.blocked_on_question(served.services)
    phone.pair()
    note = phone.page.locator(f"#ask-{ask.id}-card textarea[name=note]")
    note.fill("Metres, but")
    _, later = items.blocked_on_question(served.services, "Label the axes")  # an agent asks meanwhile

    phone.page.keyboard.press("Tab")  # the note is left half typed; the page may update now

    expect(phone.page.locator(f"#ask-{later.id}-card")).to_be_visible()
    expect(note).to_have_value("Metres, but")


def test_without_script_a_decision_posts_at_once_and_the_page_comes_back(
    browser: Browser, served: Served
) -> None:
    items.with_feature(served.services)
    task, ask = items.blocked_on_question(served.services)
    phone = open_phone(browser, served, script=False)
    phone.pair()

    phone.page.locator(f"#ask-{ask.id}-card").get_by_role("button", name="feet").click()

    expect(phone.page.locator(".notice")).to_contain_text(f"Answered question #{ask.id}")
    assert served.services.tasks.get(task.id).status is TaskStatus.PENDING
    phone.page.context.close()
    assert phone.problems == []


def test_request_changes_on_a_review_with_comments_sends_the_task_back(
    browser: Browser, review_served: Served
) -> None:
    task = task_in_review(review_served.services, "Greet loudly", {"app.py": "print('HELLO')\n"}, "Shouted.")
    phone = open_phone(browser, review_served)
    phone.pair()
    phone.go("/reviews")
    phone.page.locator(f"#review-{task.id}").click()
    expect(phone.page.locator(".line.added")).to_contain_text("print('HELLO')")
    changes = phone.page.locator(f"#changes-{task.id}")
    changes.locator("select[name=file]").select_option("app.py")
    changes.locator("textarea[name=comment]").fill("Not so loud")
    changes.get_by_role("button", name="Add another comment").click()
    changes.locator("textarea[name=comment]").nth(1).fill("And add a test")

    changes.get_by_role("button", name="Request changes").click()

    expect(phone.page.locator(".notice")).to_contain_text("sent back with 2 comment(s)")
    assert phone.page.url == review_served.url + "/reviews"
    assert review_served.services.tasks.get(task.id).status is TaskStatus.PENDING
    assert [(c.body, c.where, c.state) for c in review_served.services.reviews.comments(task.id)] == [
        ("Not so loud", "app.py", ReviewCommentState.REQUESTED),
        ("And add a test", "", ReviewCommentState.REQUESTED),
    ]
    phone.page.context.close()
    assert phone.problems == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_fits_a_phone_with_thumb_sized_targets(
    browser: Browser, review_served: Served, scheme: str
) -> None:
    services = review_served.services
    edits = {"app.py": "def greet():\n" + LONG_LINE, "notes.txt": "one\nTWO\nthree\nfour\n"}
    review = task_in_review(services, "Greet with every part of the greeting", edits, "Built it from parts.")
    items.blocked_on_question(services)
    items.suggested(services)
    items.flagged(services)
    items.failed(services)
    phone = open_phone(browser, review_served, scheme)
    phone.go("/pair")
    shots = [phone.shoot(f"pair-{scheme}")]
    problems: dict[str, object] = {}
    phone.pair()
    for name, path in [
        ("inbox", "/"),
        ("reviews", "/reviews"),
        ("review", f"/reviews/{review.id}"),
        ("loop", "/loop"),
    ]:
        phone.go(path)
        shots.append(phone.shoot(f"{name}-{scheme}"))
        wider, small = phone.wider_than_the_screen(), phone.small_targets()
        if wider or small:
            problems[name] = (wider, small)

    phone.page.keyboard.press("Tab")  # on the Loop page: the first link has the keyboard's focus, shown
    outline = phone.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert (phone.page.evaluate("document.activeElement.textContent"), outline) == ("Inbox", "solid")
    phone.go("/")
    phone.page.get_by_role("button", name="Approve").click()
    expect(phone.page.locator("#held")).to_be_visible()
    shots.append(phone.shoot(f"inbox-held-{scheme}"))
    phone.page.get_by_role("button", name="Undo").click()

    assert problems == {}
    assert all(shot.stat().st_size > 0 for shot in shots)
    phone.page.context.close()
    assert phone.problems == []
