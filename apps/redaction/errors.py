"""The redaction app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.field_errors import INVALID_KIND, INVALID_VALUE

INVALID_PATTERN = error_code(
    "invalid_pattern", 400, "The allow-list pattern is empty, too long or not a valid expression."
)
TOO_MANY_PATTERNS = error_code(
    "too_many_patterns", 400, "The workspace keeps its most allow-list patterns; delete one first."
)
UNSUPPORTED_PATTERN = error_code("unsupported_pattern", 400, "Patterns run on RE2: no lookarounds or backreferences.")
ALLOWLIST_ENTRY_NOT_FOUND = error_code("allowlist_entry_not_found", 404, "Allow-list entry not found.")
ALLOWLIST_ENTRY_EXISTS = error_code("allowlist_entry_exists", 409, "This allow-list entry exists already.")
TEXT_TOO_COSTLY = error_code("text_too_costly", 413, "The text is too costly to redact; send a shorter text.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_redact_create=(TEXT_TOO_COSTLY,),
    v1_redaction_allowlist_create=(
        INVALID_KIND,
        INVALID_PATTERN,
        INVALID_VALUE,
        TOO_MANY_PATTERNS,
        UNSUPPORTED_PATTERN,
        ALLOWLIST_ENTRY_EXISTS,
    ),
    v1_redaction_allowlist_destroy=(ALLOWLIST_ENTRY_NOT_FOUND,),
    v1_redaction_allowlist_list=(),
    v1_redaction_allowlist_retrieve=(ALLOWLIST_ENTRY_NOT_FOUND,),
)
