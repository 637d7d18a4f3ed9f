"""The web app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code

INVALID_TAGS = error_code(
    "invalid_tags", 400, "A tag is 1-50 characters of a-z 0-9 _ . : -, and a note has at most so many tags."
)
