"""Unique constraints as the arbiter of races: which constraint an IntegrityError names."""

from __future__ import annotations

from django.db import IntegrityError


def violated_constraint(exc: IntegrityError) -> str | None:
    """The name of the constraint PostgreSQL reported (psycopg's diagnostics), or None."""
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None)
