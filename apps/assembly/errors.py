"""The assembly app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.errors import (
    EMBEDDING_DIMENSION_MISMATCH,
    EMBEDDING_UNAVAILABLE,
    INVALID_QUERY_VECTOR,
    INVALID_QUERY_VECTOR_DIMENSIONS,
    MISSING_LAYER,
    OVERLOADED,
)
from apps.core.field_errors import (
    INVALID_BY_TYPE,
    INVALID_CONTEXT_POSITION,
    INVALID_CONTEXT_WINDOW,
    INVALID_CONVERSATION_PRESET,
    INVALID_EXPAND_RELATED,
    INVALID_FORMAT,
    INVALID_IDS,
    INVALID_LIMIT,
    INVALID_NAME,
    INVALID_PREFERRED_FORMAT,
    INVALID_QUERY,
    INVALID_RANKING_WEIGHTS,
    INVALID_RETRIEVAL_LIMIT,
    INVALID_SAFETY_MARGIN,
    INVALID_TEMPLATE,
    INVALID_TOKEN_BUDGET,
    INVALID_TOKENS_USED,
    INVALID_TYPE_FILTERS,
)
from apps.layers.errors import AMBIGUOUS_EXTERNAL_ID, ITEM_NOT_FOUND, LAYER_NOT_FOUND

INVALID_OPTIONS = error_code("invalid_options", 400, "`options` must be an object.")
MISSING_QUERY = error_code("missing_query", 400, "Give `query` or `query_vector`.")
UNKNOWN_RANKING = error_code("unknown_ranking", 400, "Unknown ranking function.")
UNKNOWN_TEMPLATE = error_code("unknown_template", 400, "Unknown template.")
CONVERSATION_NOT_FOUND = error_code("conversation_not_found", 404, "Conversation not found.")
TEMPLATE_NOT_FOUND = error_code("template_not_found", 404, "Template not found.")
# 400 in the console's replay of a cache hit whose original is no longer recorded (a page, not the API).
TRACE_NOT_FOUND = error_code("trace_not_found", 404, "Trace not found.", also=(400,))
DUPLICATE_TEMPLATE = error_code("duplicate_template", 409, "A template of this name exists.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_context_create=(
        AMBIGUOUS_EXTERNAL_ID,
        LAYER_NOT_FOUND,
        INVALID_CONTEXT_POSITION,
        INVALID_CONTEXT_WINDOW,
        INVALID_CONVERSATION_PRESET,
        INVALID_EXPAND_RELATED,
        INVALID_FORMAT,
        INVALID_PREFERRED_FORMAT,
        INVALID_QUERY_VECTOR,
        INVALID_QUERY_VECTOR_DIMENSIONS,
        INVALID_RANKING_WEIGHTS,
        INVALID_RETRIEVAL_LIMIT,
        INVALID_SAFETY_MARGIN,
        INVALID_TOKEN_BUDGET,
        INVALID_TOKENS_USED,
        INVALID_TYPE_FILTERS,
        MISSING_LAYER,
        MISSING_QUERY,
        UNKNOWN_RANKING,
        UNKNOWN_TEMPLATE,
        CONVERSATION_NOT_FOUND,
        ITEM_NOT_FOUND,
        OVERLOADED,
        EMBEDDING_DIMENSION_MISMATCH,
        EMBEDDING_UNAVAILABLE,
    ),
    v1_context_preview_create=(
        AMBIGUOUS_EXTERNAL_ID,
        LAYER_NOT_FOUND,
        INVALID_CONTEXT_POSITION,
        INVALID_CONTEXT_WINDOW,
        INVALID_CONVERSATION_PRESET,
        INVALID_EXPAND_RELATED,
        INVALID_FORMAT,
        INVALID_PREFERRED_FORMAT,
        INVALID_QUERY_VECTOR,
        INVALID_QUERY_VECTOR_DIMENSIONS,
        INVALID_RANKING_WEIGHTS,
        INVALID_RETRIEVAL_LIMIT,
        INVALID_SAFETY_MARGIN,
        INVALID_TOKEN_BUDGET,
        INVALID_TOKENS_USED,
        INVALID_TYPE_FILTERS,
        MISSING_LAYER,
        MISSING_QUERY,
        UNKNOWN_RANKING,
        UNKNOWN_TEMPLATE,
        CONVERSATION_NOT_FOUND,
        ITEM_NOT_FOUND,
        OVERLOADED,
        EMBEDDING_DIMENSION_MISMATCH,
        EMBEDDING_UNAVAILABLE,
    ),
    v1_context_stream_retrieve=(
        AMBIGUOUS_EXTERNAL_ID,
        LAYER_NOT_FOUND,
        INVALID_CONTEXT_POSITION,
        INVALID_CONTEXT_WINDOW,
        INVALID_CONVERSATION_PRESET,
        INVALID_EXPAND_RELATED,
        INVALID_FORMAT,
        INVALID_PREFERRED_FORMAT,
        INVALID_QUERY_VECTOR,
        INVALID_QUERY_VECTOR_DIMENSIONS,
        INVALID_RANKING_WEIGHTS,
        INVALID_RETRIEVAL_LIMIT,
        INVALID_SAFETY_MARGIN,
        INVALID_TOKEN_BUDGET,
        INVALID_TOKENS_USED,
        INVALID_TYPE_FILTERS,
        MISSING_LAYER,
        MISSING_QUERY,
        UNKNOWN_RANKING,
        UNKNOWN_TEMPLATE,
        CONVERSATION_NOT_FOUND,
        ITEM_NOT_FOUND,
        OVERLOADED,
        EMBEDDING_DIMENSION_MISMATCH,
        EMBEDDING_UNAVAILABLE,
    ),
    v1_history_retrieve=(
        INVALID_FORMAT,
        INVALID_IDS,
        INVALID_LIMIT,
        INVALID_QUERY,
        ITEM_NOT_FOUND,
        LAYER_NOT_FOUND,
        OVERLOADED,
        EMBEDDING_DIMENSION_MISMATCH,
        EMBEDDING_UNAVAILABLE,
    ),
    v1_templates_create=(INVALID_BY_TYPE, INVALID_NAME, INVALID_TEMPLATE, DUPLICATE_TEMPLATE),
    v1_templates_destroy=(TEMPLATE_NOT_FOUND,),
    v1_templates_list=(),
    v1_templates_retrieve=(TEMPLATE_NOT_FOUND,),
    v1_templates_update=(INVALID_BY_TYPE, INVALID_NAME, INVALID_TEMPLATE, TEMPLATE_NOT_FOUND),
    v1_traces_retrieve=(TRACE_NOT_FOUND,),
)
