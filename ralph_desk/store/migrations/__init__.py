"""Alembic migrations of the ralph_desk schema."""
