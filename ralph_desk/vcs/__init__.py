"""Git for the review desk: a worktree and a branch per task, a commit per session, diffs and merges.

Plain subprocess calls to the `git` program; no database, no Qt, no MCP.
"""
