"""The layers app's error codes: each with its HTTP status and default message (apps/core/error_catalogue.py)."""

from __future__ import annotations

from apps.core.error_catalogue import error_code, operation_codes
from apps.core.errors import CONTENT_TOO_LARGE, INVALID_FIELDS
from apps.core.field_errors import (
    INVALID_CONFIDENCE,
    INVALID_CONTENT,
    INVALID_HELPFULNESS,
    INVALID_IMPORTANCE,
    INVALID_KIND,
    INVALID_ON_DUPLICATE,
    INVALID_PARENT,
    INVALID_PRIORITY,
    INVALID_ROLE,
    INVALID_STATE,
    INVALID_TARGET,
    INVALID_TYPE,
    INVALID_WEIGHT,
)

AMBIGUOUS_EXTERNAL_ID = error_code(
    "ambiguous_external_id", 400, "Several layers have this external_id; give the layer id."
)
CANNOT_DELETE_ROOT = error_code("cannot_delete_root", 400, "The company layer cannot be deleted.")
COMPANY_EXISTS = error_code("company_exists", 400, "Each workspace has exactly one company layer, created with it.")
INVALID_RELATIONSHIP_KIND = error_code("invalid_relationship_kind", 400, "Unknown relationship kind.")
TOO_MANY_ITEMS = error_code("too_many_items", 400, "Too many items in one request.")
ITEM_NOT_FOUND = error_code("item_not_found", 404, "Item not found.")
# 400 in the console's replay of a trace whose layer is gone (a page, not the API).
LAYER_NOT_FOUND = error_code("layer_not_found", 404, "Layer not found.", also=(400,))
PARENT_NOT_FOUND = error_code("parent_not_found", 404, "Parent message not found.")
PROPOSAL_NOT_FOUND = error_code("proposal_not_found", 404, "Proposal not found.")
RELATIONSHIP_NOT_FOUND = error_code("relationship_not_found", 404, "Relationship not found.")
DUPLICATE_EXTERNAL_ID = error_code(
    "duplicate_external_id", 409, "This external_id exists already, or repeats in the request."
)
DUPLICATE_RELATIONSHIP = error_code("duplicate_relationship", 409, "This relationship exists already.")
PROPOSAL_DECIDED = error_code("proposal_decided", 409, "This proposal was decided already.")
REQUEST_CONTENT_TOO_LARGE = error_code(
    "request_content_too_large", 413, "The request carries more content than a request may."
)

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_items_bulk_create=(
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
    v1_items_create=(
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
    v1_items_destroy=(ITEM_NOT_FOUND,),
    v1_items_list=(LAYER_NOT_FOUND,),
    v1_items_partial_update=(
        INVALID_CONFIDENCE,
        INVALID_CONTENT,
        INVALID_FIELDS,
        INVALID_HELPFULNESS,
        INVALID_IMPORTANCE,
        INVALID_KIND,
        INVALID_ON_DUPLICATE,
        INVALID_PARENT,
        INVALID_PRIORITY,
        INVALID_ROLE,
        INVALID_TYPE,
        ITEM_NOT_FOUND,
        DUPLICATE_EXTERNAL_ID,
        CONTENT_TOO_LARGE,
    ),
    v1_items_retrieve=(ITEM_NOT_FOUND,),
    v1_layers_create=(COMPANY_EXISTS, INVALID_PARENT, LAYER_NOT_FOUND, DUPLICATE_EXTERNAL_ID),
    v1_layers_destroy=(CANNOT_DELETE_ROOT, LAYER_NOT_FOUND),
    v1_layers_list=(LAYER_NOT_FOUND,),
    v1_layers_partial_update=(COMPANY_EXISTS, INVALID_PARENT, LAYER_NOT_FOUND, DUPLICATE_EXTERNAL_ID),
    v1_layers_retrieve=(LAYER_NOT_FOUND,),
    v1_relationships_create=(
        INVALID_RELATIONSHIP_KIND,
        INVALID_TARGET,
        INVALID_WEIGHT,
        ITEM_NOT_FOUND,
        DUPLICATE_RELATIONSHIP,
    ),
    v1_relationships_destroy=(RELATIONSHIP_NOT_FOUND,),
    v1_relationships_list=(ITEM_NOT_FOUND,),
    v1_relationships_retrieve=(RELATIONSHIP_NOT_FOUND,),
    v1_supersessions_accept_create=(PROPOSAL_NOT_FOUND, PROPOSAL_DECIDED),
    v1_supersessions_list=(INVALID_STATE,),
    v1_supersessions_reject_create=(PROPOSAL_NOT_FOUND, PROPOSAL_DECIDED),
)
