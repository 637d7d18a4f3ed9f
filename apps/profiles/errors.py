"""The profiles app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.field_errors import (
    INVALID_CONTEXT_POSITION,
    INVALID_CONTEXT_WINDOW,
    INVALID_CONVERSATION_PRESET,
    INVALID_EXCLUDED_ITEMS,
    INVALID_NAME,
    INVALID_PREFERRED_FORMAT,
    INVALID_RANKING_WEIGHTS,
    INVALID_RETRIEVAL_LIMIT,
    INVALID_SAFETY_MARGIN,
    INVALID_TOKEN_BUDGET,
    INVALID_TYPE_FILTERS,
)
from apps.layers.errors import ITEM_NOT_FOUND

TOO_MANY_EXCLUDED_ITEMS = error_code("too_many_excluded_items", 400, "A profile excludes a limited number of items.")
PROFILE_NOT_FOUND = error_code("profile_not_found", 404, "Profile not found.")
DUPLICATE_PROFILE = error_code("duplicate_profile", 409, "A profile of this name exists.")

# What a profile's settings and excluded items are refused with (profile_check, excluded_items_check).
SETTINGS_CODES = (
    INVALID_CONTEXT_POSITION,
    INVALID_CONTEXT_WINDOW,
    INVALID_CONVERSATION_PRESET,
    INVALID_EXCLUDED_ITEMS,
    INVALID_NAME,
    INVALID_PREFERRED_FORMAT,
    INVALID_RANKING_WEIGHTS,
    INVALID_RETRIEVAL_LIMIT,
    INVALID_SAFETY_MARGIN,
    INVALID_TOKEN_BUDGET,
    INVALID_TYPE_FILTERS,
    ITEM_NOT_FOUND,
    TOO_MANY_EXCLUDED_ITEMS,
)

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_profiles_create=(*SETTINGS_CODES, DUPLICATE_PROFILE),
    v1_profiles_destroy=(PROFILE_NOT_FOUND,),
    v1_profiles_list=(),
    v1_profiles_retrieve=(PROFILE_NOT_FOUND,),
    v1_profiles_partial_update=(*SETTINGS_CODES, PROFILE_NOT_FOUND, DUPLICATE_PROFILE),
    v1_profiles_update=(*SETTINGS_CODES, PROFILE_NOT_FOUND, DUPLICATE_PROFILE),
)
