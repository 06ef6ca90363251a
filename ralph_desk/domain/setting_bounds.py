"""The largest value of each numeric project setting: one number each, read by the config's rules, the
window's boxes, the command line and the tools' input models."""

from __future__ import annotations

MAX_TURNS = 1_000
MAX_ITERATIONS = 10_000
MAX_PARALLEL = 64
MAX_COST_USD = 100_000.0
MAX_SESSION_TIMEOUT_S = 24 * 3600
MAX_STUCK_THRESHOLD = 50
MAX_REVIEW_EVERY = 1_000
MAX_RATE_WAIT_S = 24 * 3600.0
MAX_CHECKS = 20
MAX_CHECK_TIMEOUT_S = 24 * 3600
MAX_COMMAND_TEXT = 4_000
MAX_WORKTREE_FILES = 50
