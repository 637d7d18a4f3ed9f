"""The summaries app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.errors import INVALID_FIELDS
from apps.core.field_errors import INVALID_BODY, INVALID_PERSONALIZATION
from apps.layers.errors import LAYER_NOT_FOUND

USER_NOT_FOUND = error_code("user_not_found", 404, "The user is not a member of this workspace.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_layers_config_retrieve=(LAYER_NOT_FOUND,),
    v1_layers_config_update=(INVALID_BODY, INVALID_FIELDS, INVALID_PERSONALIZATION, LAYER_NOT_FOUND),
    v1_layers_summaries_retrieve=(LAYER_NOT_FOUND, USER_NOT_FOUND),
    v1_layers_summarize_create=(LAYER_NOT_FOUND,),
)
