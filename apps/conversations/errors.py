"""The codes of the conversations operations (apps/core/error_catalogue.py): the app raises shared ones."""

from __future__ import annotations

from apps.core.error_catalogue import operation_codes
from apps.core.errors import CONTENT_TOO_LARGE
from apps.core.field_errors import (
    INVALID_CONFIDENCE,
    INVALID_CONTENT,
    INVALID_GRAPH,
    INVALID_HELPFULNESS,
    INVALID_IMPORTANCE,
    INVALID_KIND,
    INVALID_LIMIT,
    INVALID_OFFSET,
    INVALID_ON_DUPLICATE,
    INVALID_PARENT,
    INVALID_PRIORITY,
    INVALID_ROLE,
    INVALID_TYPE,
)
from apps.layers.errors import (
    COMPANY_EXISTS,
    DUPLICATE_EXTERNAL_ID,
    ITEM_NOT_FOUND,
    LAYER_NOT_FOUND,
    PARENT_NOT_FOUND,
    REQUEST_CONTENT_TOO_LARGE,
    TOO_MANY_ITEMS,
)

# The codes each operation can answer with besides those of every operation and of its input fields
# (apps/core/schema.py lists them all in the schema); tests/core/test_error_catalogue.py holds each list
# to what the operation's code path names.
operation_codes(
    v1_items_importance_create=(INVALID_KIND, ITEM_NOT_FOUND),
    v1_items_thread_retrieve=(INVALID_KIND, ITEM_NOT_FOUND),
    v1_layers_branches_retrieve=(INVALID_LIMIT, INVALID_OFFSET, LAYER_NOT_FOUND),
    v1_layers_communities_create=(LAYER_NOT_FOUND,),
    v1_layers_communities_retrieve=(LAYER_NOT_FOUND,),
    v1_layers_export_retrieve=(LAYER_NOT_FOUND,),
    v1_layers_import_create=(
        COMPANY_EXISTS,
        INVALID_CONFIDENCE,
        INVALID_CONTENT,
        INVALID_GRAPH,
        INVALID_HELPFULNESS,
        INVALID_IMPORTANCE,
        INVALID_KIND,
        INVALID_ON_DUPLICATE,
        INVALID_PARENT,
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
)
