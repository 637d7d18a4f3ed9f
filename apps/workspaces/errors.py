"""The workspaces app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import common_codes, error_code, operation_codes
from apps.core.errors import (
    ARCHIVE_DAMAGED,
    ARCHIVE_FORMAT_UNKNOWN,
    ARCHIVE_INVALID,
    ARCHIVE_MEMBER_MISSING,
    WORKSPACE_NOT_EMPTY,
)
from apps.core.field_errors import (
    INVALID_DAYS,
    INVALID_NAME,
    INVALID_NOTE,
    INVALID_ROLE,
    INVALID_SCOPES,
    INVALID_TARGET_KIND,
)

INVALID_LAYER_KIND = error_code("invalid_layer_kind", 400, "Unknown layer kind.")
INVALID_SLUG = error_code("invalid_slug", 400, "A workspace slug is letters, digits, - and _, at most 64.")
INSUFFICIENT_SCOPE = error_code("insufficient_scope", 403, "The API key's scopes do not allow this operation.")
API_KEY_NOT_FOUND = error_code("api_key_not_found", 404, "API key not found.")
INVITATION_INVALID = error_code(
    "invitation_invalid",
    404,
    "This invitation link is not valid (used, revoked, expired or mistyped): ask an admin for a new one.",
)
INVITATION_NOT_FOUND = error_code("invitation_not_found", 404, "Invitation not found.")
API_KEY_SECRET_NOT_REPLAYED = error_code(
    "api_key_secret_not_replayed",
    409,
    "A new key's secret is shown once: a repeat of the request does not show it again.",
)
INVITATION_ACCEPTED = error_code(
    "invitation_accepted", 409, "This invitation was accepted already: remove the member instead."
)
INVITATION_LINK_NOT_REPLAYED = error_code(
    "invitation_link_not_replayed",
    409,
    "An invitation link is shown once: a repeat of the request does not show it again.",
)
LAST_ADMIN = error_code(
    "last_admin", 409, "The last admin of a workspace stays admin: make another member admin first."
)
WORKSPACE_EXISTS = error_code("workspace_exists", 409, "A workspace with this slug exists already.")

# The Idempotency-Key header (apps/workspaces/idempotency.py).
INVALID_IDEMPOTENCY_KEY = error_code(
    "invalid_idempotency_key", 400, "Idempotency-Key must be 1 to 255 printable ASCII."
)
IDEMPOTENCY_KEY_IN_PROGRESS = error_code(
    "idempotency_key_in_progress", 409, "A request with this Idempotency-Key is still running; retry."
)
IDEMPOTENCY_KEY_REUSED = error_code("idempotency_key_reused", 422, "This Idempotency-Key was used for another request.")
common_codes(INSUFFICIENT_SCOPE)  # apps/workspaces/permissions.py, on every operation
common_codes(INVALID_IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED, methods=("POST",))

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_audit_list=(INVALID_TARGET_KIND,),
    v1_invitations_create=(INVALID_DAYS, INVALID_NOTE, INVALID_ROLE, INVITATION_LINK_NOT_REPLAYED),
    v1_invitations_list=(),
    v1_invitations_revoke_create=(INVITATION_NOT_FOUND, INVITATION_ACCEPTED),
    v1_keys_create=(INVALID_NAME, INVALID_SCOPES, API_KEY_SECRET_NOT_REPLAYED),
    v1_keys_list=(),
    v1_keys_revoke_create=(API_KEY_NOT_FOUND,),
    v1_status_retrieve=(),
    v1_workspace_export_retrieve=(),
    v1_workspace_import_create=(
        ARCHIVE_DAMAGED,
        ARCHIVE_FORMAT_UNKNOWN,
        ARCHIVE_INVALID,
        ARCHIVE_MEMBER_MISSING,
        WORKSPACE_NOT_EMPTY,
    ),
    v1_workspace_partial_update=(INVALID_LAYER_KIND,),
    v1_workspace_retrieve=(),
)
