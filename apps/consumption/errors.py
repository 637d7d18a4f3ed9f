"""The consumption app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.assembly.errors import TRACE_NOT_FOUND
from apps.core.error_catalogue import error_code, operation_codes
from apps.core.errors import CONTENT_TOO_LARGE
from apps.core.field_errors import (
    INVALID_CONFIDENCE,
    INVALID_CONTENT,
    INVALID_HELPFULNESS,
    INVALID_IMPORTANCE,
    INVALID_KIND,
    INVALID_ON_DUPLICATE,
    INVALID_PRIORITY,
    INVALID_ROLE,
    INVALID_TYPE,
)
from apps.layers.errors import (
    DUPLICATE_EXTERNAL_ID,
    ITEM_NOT_FOUND,
    LAYER_NOT_FOUND,
    PARENT_NOT_FOUND,
    REQUEST_CONTENT_TOO_LARGE,
    TOO_MANY_ITEMS,
)

USED_NOT_INJECTED = error_code("used_not_injected", 400, "Used ids must be packages injected by this assembly.")
STRATEGY_NOT_FOUND = error_code("strategy_not_found", 404, "Strategy not found.")
CONSUMPTION_ALREADY_REPORTED = error_code(
    "consumption_already_reported", 409, "Consumption was already reported for this trace with other ids."
)

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_consumption_create=(USED_NOT_INJECTED, TRACE_NOT_FOUND, CONSUMPTION_ALREADY_REPORTED),
    v1_stats_retrieve=(),
    v1_strategies_create=(
        INVALID_CONFIDENCE,
        INVALID_CONTENT,
        INVALID_HELPFULNESS,
        INVALID_IMPORTANCE,
        INVALID_KIND,
        INVALID_ON_DUPLICATE,
        INVALID_PRIORITY,
        INVALID_ROLE,
        INVALID_TYPE,
        TOO_MANY_ITEMS,
        ITEM_NOT_FOUND,
        LAYER_NOT_FOUND,
        PARENT_NOT_FOUND,
        DUPLICATE_EXTERNAL_ID,
        CONTENT_TOO_LARGE,
        REQUEST_CONTENT_TOO_LARGE,
    ),
    v1_strategies_feedback_create=(STRATEGY_NOT_FOUND,),
    v1_strategies_list=(),
)
