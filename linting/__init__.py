"""Checks the project runs on its own code beside the linters (import-linter contract types)."""
