"""The proxy app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.field_errors import INVALID_BASE_URL, INVALID_PARENT
from apps.layers.errors import LAYER_NOT_FOUND

INVALID_UPSTREAM_KEY = error_code(
    "invalid_upstream_key", 400, "An upstream key is printable ASCII without spaces, within the length limit."
)
UPSTREAM_KEY_UNREADABLE = error_code(
    "upstream_key_unreadable",
    400,
    "The stored upstream key cannot be read (SECRET_KEY changed?): an admin sets it again.",
)
UPSTREAM_NOT_CONFIGURED = error_code("upstream_not_configured", 404, "This workspace has no upstream of this kind.")
UPSTREAM_NOT_FOUND = error_code("upstream_not_found", 404, "No upstream of this kind is configured.")
UPSTREAM_UNREACHABLE = error_code("upstream_unreachable", 502, "The upstream could not be reached.")
UPSTREAM_TIMEOUT = error_code("upstream_timeout", 504, "The upstream did not answer in time.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_proxy_settings_retrieve=(),
    v1_proxy_settings_update=(INVALID_PARENT, LAYER_NOT_FOUND),
    v1_upstreams_destroy=(UPSTREAM_NOT_FOUND,),
    v1_upstreams_list=(),
    v1_upstreams_retrieve=(UPSTREAM_NOT_FOUND,),
    v1_upstreams_update=(INVALID_BASE_URL, INVALID_UPSTREAM_KEY, UPSTREAM_NOT_FOUND),
)
