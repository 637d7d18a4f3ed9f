"""The tokens app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes

INVALID_TOKEN_COUNT = error_code("invalid_token_count", 400, "Token counts cannot be negative.")
MISSING_TEXT = error_code("missing_text", 400, "Give `text` or `messages`.")
TOKENS_INPUT_TOO_LARGE = error_code(
    "tokens_input_too_large", 413, "The text is over the characters counted per request."
)

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_tokens_create=(MISSING_TEXT, TOKENS_INPUT_TOO_LARGE),
)
