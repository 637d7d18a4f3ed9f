"""The error_patterns app's error codes, each with its HTTP status and default message."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.errors import MISSING_LAYER
from apps.core.field_errors import INVALID_LAYER
from apps.layers.errors import AMBIGUOUS_EXTERNAL_ID, LAYER_NOT_FOUND
from apps.redaction.errors import TEXT_TOO_COSTLY

ERROR_PATTERN_NOT_FOUND = error_code("error_pattern_not_found", 404, "Error pattern not found.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_attempts_create=(AMBIGUOUS_EXTERNAL_ID, INVALID_LAYER, MISSING_LAYER, LAYER_NOT_FOUND, TEXT_TOO_COSTLY),
    v1_attempts_list=(INVALID_LAYER, LAYER_NOT_FOUND),
    v1_error_patterns_destroy=(ERROR_PATTERN_NOT_FOUND,),
    v1_error_patterns_list=(),
    v1_error_patterns_match_create=(TEXT_TOO_COSTLY,),
    v1_error_patterns_retrieve=(ERROR_PATTERN_NOT_FOUND,),
)
