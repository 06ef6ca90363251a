"""Reviews on the companion page: the diff read-only with its checks, approve & merge, request changes."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import httpx2 as httpx
import pytest

from ralph_desk.domain.checks import Check, CheckPurpose
from ralph_desk.domain.enums import ReviewCommentState, TaskStatus
from ralph_desk.domain.records import Task
from ralph_desk.project import update_config
from tests.companion.conftest import Served
from tests.support.git_repo import commit_all
from tests.support.review_project import read_tip, task_in_review

HTML = {"accept": "text/html"}
LOUD = {"app.py": "def greet():\n    return 'HELLO'\n"}


@pytest.fixture
def phone(review_served: Served) -> Iterator[httpx.Client]:
    with review_served.paired_client() as client:
        yield client


@pytest.fixture
def in_review(review_served: Served) -> Task:
    return task_in_review(review_served.services, "Greet loudly", LOUD, "Shouted.")


def test_the_review_page_shows_the_diff_coloured_by_line_its_checks_and_the_commit_it_approves(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    listing = phone.get("/reviews", headers=HTML).text
    assert f'href="/reviews/{in_review.id}"' in listing and "Shouted." in listing

    page = phone.get(f"/reviews/{in_review.id}", headers=HTML).text

    assert '<div class="line removed">' in page and "return &#39;hello&#39;" in page
    assert '<div class="line added">' in page and "return &#39;HELLO&#39;" in page
    assert "No check has run on this work." in page
    tip = read_tip(review_served.services, in_review.id)
    assert tip is not None and f'name="commit" value="{tip}"' in page


def test_request_changes_with_comments_sends_the_task_back_as_the_window_does(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    sent = phone.post(
        f"/act/reviews/{in_review.id}/changes",
        data={"file": ["app.py", ""], "comment": ["Keep it quiet", "And test it"]},
    )

    assert (sent.status_code, sent.headers["location"]) == (303, "/reviews")
    reviews = review_served.services.reviews
    assert review_served.services.tasks.get(in_review.id).status is TaskStatus.PENDING
    assert [(c.body, c.where, c.state, c.author) for c in reviews.comments(in_review.id)] == [
        ("Keep it quiet", "app.py", ReviewCommentState.REQUESTED, "Phone (companion)"),
        ("And test it", "", ReviewCommentState.REQUESTED, "Phone (companion)"),
    ]


def test_request_changes_without_a_comment_is_refused_and_the_task_stays_in_review(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    refused = phone.post(f"/act/reviews/{in_review.id}/changes", data={"file": "", "comment": " "})

    assert refused.status_code == 400 and "at least one comment saying what to change" in refused.text
    assert review_served.services.tasks.get(in_review.id).status is TaskStatus.IN_REVIEW


def test_approve_with_unsent_comments_is_refused_offering_to_drop_them_then_merges(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    services = review_served.services
    services.reviews.add_comment(in_review.id, "Shouting is rude", "app.py", 2)
    tip = read_tip(services, in_review.id)
    assert tip is not None

    refused = phone.post(f"/act/reviews/{in_review.id}/approve", data={"commit": tip})

    assert refused.status_code == 409 and "1 unsent comment" in refused.text
    assert 'name="drop_comments" value="1"' in refused.text
    assert services.tasks.get(in_review.id).status is TaskStatus.IN_REVIEW

    merged = phone.post(f"/act/reviews/{in_review.id}/approve", data={"commit": tip, "drop_comments": "1"})

    assert merged.status_code == 303
    assert services.tasks.get(in_review.id).status is TaskStatus.DONE
    assert (review_served.root / "app.py").read_text() == LOUD["app.py"]
    assert "merged ralph/" in phone.get("/reviews", headers=HTML).text


def test_approving_a_commit_the_branch_moved_past_is_refused_showing_the_branch_as_it_is(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    stale = "0" * 40

    refused = phone.post(f"/act/reviews/{in_review.id}/approve", data={"commit": stale})

    assert refused.status_code == 409 and "the diff below is the branch as it is now" in refused.text
    tip = read_tip(review_served.services, in_review.id)
    assert f'name="commit" value="{tip}"' in refused.text
    assert review_served.services.tasks.get(in_review.id).status is TaskStatus.IN_REVIEW


RED = Check(name="tests", run=f"{sys.executable} -c \"import sys; print('FAILED t::x'); sys.exit(1)\"")


def test_failing_checks_show_with_their_output_and_merge_only_when_the_person_merges_anyway(
    review_served: Served, phone: httpx.Client, in_review: Task
) -> None:
    services = review_served.services
    update_config(services.paths, checks=[RED.model_dump()])
    commit_all(review_served.root, "checks")
    worktree = services.workspaces.existing(in_review.id)
    assert worktree is not None
    services.checks.run([RED], worktree.path, purpose=CheckPurpose.RERUN, task_id=in_review.id)
    page = phone.get(f"/reviews/{in_review.id}", headers=HTML).text
    assert '<span class="pill bad">failed</span>' in page and "FAILED t::x" in page
    tip = read_tip(services, in_review.id)
    assert tip is not None

    refused = phone.post(f"/act/reviews/{in_review.id}/approve", data={"commit": tip})

    assert refused.status_code == 409 and "required checks fail (tests failed)" in refused.text
    assert 'name="anyway" value="1"' in refused.text
    assert services.tasks.get(in_review.id).status is TaskStatus.IN_REVIEW

    merged = phone.post(f"/act/reviews/{in_review.id}/approve", data={"commit": tip, "anyway": "1"})

    assert merged.status_code == 303
    assert services.tasks.get(in_review.id).status is TaskStatus.DONE
    assert any("Merge anyway" in comment.body for comment in services.reviews.comments(in_review.id))
