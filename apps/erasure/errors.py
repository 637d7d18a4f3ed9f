"""The erasure app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.field_errors import INVALID_DRY_RUN_ID

ERASURE_DRY_RUN_REQUIRED = error_code(
    "erasure_dry_run_required",
    400,
    "A text match is erased only after its dry run: POST it with dry_run true, review the counts, "
    "then send the same request with dry_run_id.",
)
ERASURE_TARGET_REQUIRED = error_code(
    "erasure_target_required", 400, "Name what to erase: item_ids, external_id_prefix, user or text."
)
ERASURE_DRY_RUN_NOT_FOUND = error_code("erasure_dry_run_not_found", 404, "Dry run not found.")
ERASURE_NOT_FOUND = error_code("erasure_not_found", 404, "Erasure not found.")
ERASURE_DRY_RUN_EXPIRED = error_code("erasure_dry_run_expired", 409, "The dry run is too old: review a new one.")
ERASURE_DRY_RUN_MISMATCH = error_code(
    "erasure_dry_run_mismatch",
    409,
    "This request names something else than the dry run: send exactly what the dry run named.",
)
ERASURE_IN_PROGRESS = error_code("erasure_in_progress", 409, "Another erasure of this workspace is running.")

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_erasure_create=(
        ERASURE_DRY_RUN_REQUIRED,
        ERASURE_TARGET_REQUIRED,
        INVALID_DRY_RUN_ID,
        ERASURE_DRY_RUN_NOT_FOUND,
        ERASURE_DRY_RUN_EXPIRED,
        ERASURE_DRY_RUN_MISMATCH,
        ERASURE_IN_PROGRESS,
    ),
    v1_erasure_list=(),
    v1_erasure_retrieve=(ERASURE_NOT_FOUND,),
)
