"""What the panes may name of the layers below: the services' handle and the types it returns or raises.

Panes never import `services`, `store` or `vcs` (an import-linter contract says so): they are handed
this handle and call it only inside an operation they give the worker (`gui/worker.py`), so the call
runs off the GUI thread.
"""

from __future__ import annotations

from ralph_desk.project import ProjectError
from ralph_desk.services.checks import FirstTimePasses
from ralph_desk.services.companion import PairingCode
from ralph_desk.services.container import Services
from ralph_desk.services.disciplines import UPDATABLE_FIELDS as DISCIPLINE_FIELDS
from ralph_desk.services.errors import ConflictError, NotFoundError, ServiceError
from ralph_desk.services.inbox import FailedTask, Question, TriageResult, title_from
from ralph_desk.services.merge_queue import MergeBusyError
from ralph_desk.services.reviews import (
    ChecksFailingError,
    ReviewMovedError,
    ReviewService,
    UnsentCommentsError,
)
from ralph_desk.services.sessions import process_exists
from ralph_desk.services.workspaces import NoBaseBranchError
from ralph_desk.store.database import Database
from ralph_desk.store.errors import StoreError
from ralph_desk.store.mapping import summary_of
from ralph_desk.store.merge_queue import TOPIC as MERGE_TOPIC
from ralph_desk.store.reviews import TOPIC as REVIEW_COMMENT_TOPIC

__all__ = [
    "DISCIPLINE_FIELDS",
    "MERGE_TOPIC",
    "REVIEW_COMMENT_TOPIC",
    "ChecksFailingError",
    "ConflictError",
    "Database",
    "FailedTask",
    "FirstTimePasses",
    "MergeBusyError",
    "NoBaseBranchError",
    "NotFoundError",
    "PairingCode",
    "Question",
    "ReviewMovedError",
    "ReviewService",
    "Services",
    "TriageResult",
    "UnsentCommentsError",
    "is_refusal",
    "process_exists",
    "summary_of",
    "title_from",
]


def is_refusal(error: BaseException) -> bool:
    """Whether an error is a refusal said in words for a person (not a fault to log with its type)."""
    return isinstance(error, ServiceError | StoreError | ProjectError)
