"""The experiments app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code

NO_QUERIES = error_code("no_queries", 400, "The search finds no assembly with a query.")
NOT_IN_WORKSPACE = error_code("not_in_workspace", 400, "The set and the layer must be the workspace's own.")
EXPERIMENT_RUN_NOT_FOUND = error_code("experiment_run_not_found", 404, "No such experiment run in this workspace.")
QUESTION_SET_NOT_FOUND = error_code("question_set_not_found", 404, "No such question set in this workspace.")
DUPLICATE_QUESTION_SET = error_code("duplicate_question_set", 409, "A question set of this name exists.")
QUESTION_SET_INVALID = error_code(
    "question_set_invalid", 400, "The file is not a question set: `details` says where and why."
)
