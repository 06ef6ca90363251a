"""The companion's pages and decisions over real HTTPS, without a browser: each decision is the window's
service call, a refusal comes back as the page with its message and changes nothing (issue 25)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2 as httpx
import pytest

from ralph_desk.domain.enums import FlagResolution, ReviewDecision, TaskStatus
from tests.companion import inbox_items as items
from tests.companion.conftest import Served

HTML = {"accept": "text/html"}
PHONE = "Phone (companion)"
"""How the paired client's decisions are recorded: its device name, marked as the companion's."""


@pytest.fixture
def phone(served: Served) -> Iterator[httpx.Client]:
    """A paired device's client, on a project with feature `core` and discipline `backend`."""
    items.with_feature(served.services)
    with served.paired_client() as client:
        yield client


def test_an_option_and_a_note_answer_the_question_and_the_task_is_pending_again(
    served: Served, phone: httpx.Client
) -> None:
    task, ask = items.blocked_on_question(served.services)
    page = phone.get("/", headers=HTML)
    assert 'value="metres"' in page.text and "★ metres" in page.text

    answer = phone.post(f"/act/asks/{ask.id}", data={"option": "metres", "note": "One decimal."})

    assert (answer.status_code, answer.headers["location"]) == (303, "/")
    answered = served.services.signals.get(ask.id)
    assert (answered.answer, answered.decided_by) == ("metres\n\nOne decimal.", PHONE)
    assert served.services.tasks.get(task.id).status is TaskStatus.PENDING
    after = phone.get("/", headers=HTML).text
    assert f"Answered question #{ask.id}" in after and "Metres or feet?" not in after


def test_an_answer_given_twice_is_refused_on_the_page_with_the_note_kept_and_nothing_changed(
    served: Served, phone: httpx.Client
) -> None:
    _, ask = items.blocked_on_question(served.services)
    served.services.inbox.answer(ask.id, "feet")

    again = phone.post(f"/act/asks/{ask.id}", data={"option": "", "note": "Metres after all"})

    assert again.status_code == 409
    assert "already answered" in again.text and "Metres after all</textarea>" in again.text  # kept to copy
    assert served.services.signals.get(ask.id).answer == "feet"


def test_an_empty_answer_is_refused_saying_what_to_do(served: Served, phone: httpx.Client) -> None:
    task, ask = items.blocked_on_question(served.services)

    empty = phone.post(f"/act/asks/{ask.id}", data={"option": "", "note": "  "})

    assert empty.status_code == 400 and "choose an option or type an answer" in empty.text
    assert served.services.tasks.get(task.id).status is TaskStatus.NEEDS_INPUT


def test_approving_a_suggestion_makes_its_task_pending(served: Served, phone: httpx.Client) -> None:
    suggestion = items.suggested(served.services)

    done = phone.post(f"/act/suggestions/{suggestion.id}/approve")

    assert done.status_code == 303
    reviewed = served.services.signals.get(suggestion.id)
    assert reviewed.review_decision is ReviewDecision.APPROVED and reviewed.created_task_id is not None
    assert reviewed.decided_by == PHONE
    task = served.services.tasks.get(reviewed.created_task_id)
    assert (task.title, task.status) == ("Add a legend to the chart", TaskStatus.PENDING)


def test_a_suggestion_edited_on_the_page_is_approved_with_its_new_title_and_description(
    served: Served, phone: httpx.Client
) -> None:
    suggestion = items.suggested(served.services)

    done = phone.post(
        f"/act/suggestions/{suggestion.id}/edit",
        data={"title": "Legend under the chart", "description": "Colours named, below the axis."},
    )

    assert done.status_code == 303
    task_id = served.services.signals.get(suggestion.id).created_task_id
    assert task_id is not None
    task = served.services.tasks.get(task_id)
    assert (task.title, task.description, task.status) == (
        "Legend under the chart",
        "Colours named, below the axis.",
        TaskStatus.PENDING,
    )


def test_rejecting_needs_a_reason_and_then_skips_the_task_keeping_the_reason(
    served: Served, phone: httpx.Client
) -> None:
    suggestion = items.suggested(served.services)

    bare = phone.post(f"/act/suggestions/{suggestion.id}/reject", data={"reason": ""})
    assert bare.status_code == 400 and "invalid reason" in bare.text
    assert served.services.signals.get(suggestion.id).created_task_id is None

    done = phone.post(f"/act/suggestions/{suggestion.id}/reject", data={"reason": "Out of scope"})

    assert done.status_code == 303
    task_id = served.services.signals.get(suggestion.id).created_task_id
    assert task_id is not None
    task = served.services.tasks.get(task_id)
    assert task.status is TaskStatus.SKIPPED
    assert [comment.body for comment in task.comments] == ["Rejected: Out of scope"]


@pytest.mark.parametrize("resolution", ["acknowledged", "resolved", "dismissed"])
def test_a_flag_is_triaged_with_the_window_s_choices(
    served: Served, phone: httpx.Client, resolution: str
) -> None:
    flag = items.flagged(served.services)

    done = phone.post(f"/act/flags/{flag.id}/{resolution}")

    assert done.status_code == 303
    triaged = served.services.signals.get(flag.id)
    assert (triaged.resolution, triaged.decided_by) == (FlagResolution(resolution), PHONE)
    assert "The docs name a flag that is gone" not in phone.get("/", headers=HTML).text


def test_converting_a_flag_makes_a_pending_task_of_it(served: Served, phone: httpx.Client) -> None:
    flag = items.flagged(served.services)

    assert phone.post(f"/act/flags/{flag.id}/convert").status_code == 303

    triaged = served.services.signals.get(flag.id)
    assert triaged.resolution is FlagResolution.CONVERTED and triaged.created_task_id is not None
    task = served.services.tasks.get(triaged.created_task_id)
    assert (task.title, task.status) == ("The docs name a flag that is gone", TaskStatus.PENDING)


def test_a_failed_task_is_retried_with_a_note_for_its_agent_or_skipped(
    served: Served, phone: httpx.Client
) -> None:
    retried, skipped = items.failed(served.services, "Migrate"), items.failed(served.services, "Index")

    assert phone.post(f"/act/failed/{retried.id}/retry", data={"note": "Use the new API"}).status_code == 303
    assert phone.post(f"/act/failed/{skipped.id}/skip").status_code == 303

    again = served.services.tasks.get(retried.id)
    assert again.status is TaskStatus.PENDING
    assert [(comment.author, comment.body) for comment in again.comments] == [
        (PHONE, "Retry: Use the new API")
    ]
    assert served.services.tasks.get(skipped.id).status is TaskStatus.SKIPPED
    refused = phone.post(f"/act/failed/{retried.id}/skip")
    assert refused.status_code == 409 and "not failed" in refused.text
    assert served.services.tasks.get(retried.id).status is TaskStatus.PENDING


@pytest.mark.parametrize(
    ("method", "path", "said"),
    [
        ("POST", "/act/asks/999", "no ask 999"),
        ("POST", "/act/suggestions/999/approve", "no signal 999"),
        ("POST", "/act/flags/999/resolved", "no flag 999"),
        ("POST", "/act/flags/1/fixed", "no triage &#39;fixed&#39;"),
        ("POST", "/act/failed/999/retry", "no task 999"),
        ("POST", "/act/reviews/999/changes", "no task 999"),
        ("GET", "/reviews/999", "no task 999"),
        ("GET", "/settings", "No such page."),
    ],
)
def test_an_id_or_a_page_that_names_nothing_is_a_404_page_saying_so(
    phone: httpx.Client, method: str, path: str, said: str
) -> None:
    answer = phone.request(
        method, path, headers=HTML, data={"option": "x", "comment": "x"} if method == "POST" else None
    )

    assert answer.status_code == 404
    assert said in answer.text and '<nav aria-label="Sections">' in answer.text


def test_the_loop_page_says_no_loop_runs_here_and_refuses_to_pause_one(phone: httpx.Client) -> None:
    page = phone.get("/loop", headers=HTML)
    assert "not running here" in page.text and "/act/loop/pause" not in page.text

    refused = phone.post("/act/loop/pause")

    assert refused.status_code == 409 and "No loop runs in the process" in refused.text
