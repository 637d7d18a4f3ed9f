"""The validation codes of the API's input fields: one named code per field, mapped explicitly.

A validation error in a top-level body key or query parameter answers 400 with the code mapped to its
field here, so renaming a field in a serializer never changes the public code: map the new name to the
old code. tests/core/test_error_catalogue.py holds every input field of the schema mapped. The codes
live in one table because one field name (`token_budget`, `limit`) is shared by several apps' operations.
"""

from __future__ import annotations

from apps.core.error_catalogue import FIELD_CODES, ErrorCode, error_code, field_codes
from apps.core.errors import INVALID_QUERY_VECTOR

INVALID_ACTION = error_code("invalid_action", 400, "action is invalid.")
INVALID_ACTOR = error_code("invalid_actor", 400, "actor is invalid.")
INVALID_AGENT_TYPE = error_code("invalid_agent_type", 400, "agent_type is invalid.")
INVALID_AGENT_TYPES = error_code("invalid_agent_types", 400, "agent_types is invalid.")
INVALID_BASE_URL = error_code("invalid_base_url", 400, "base_url is invalid.")
INVALID_BODY = error_code("invalid_body", 400, "body is invalid.")
INVALID_BY_TYPE = error_code(
    "invalid_by_type", 400, "A template has a limited number of type bodies, each with a short type name."
)
INVALID_CONFIDENCE = error_code("invalid_confidence", 400, "confidence is invalid.")
INVALID_CONTENT = error_code("invalid_content", 400, "content is invalid.")
INVALID_CONTEXT_POSITION = error_code("invalid_context_position", 400, "context_position is invalid.")
INVALID_CONTEXT_WINDOW = error_code("invalid_context_window", 400, "context_window is invalid.")
INVALID_CONVERSATION_ID = error_code("invalid_conversation_id", 400, "conversation_id is invalid.")
INVALID_CONVERSATION_PRESET = error_code("invalid_conversation_preset", 400, "conversation_preset is invalid.")
INVALID_CREATED_AT = error_code("invalid_created_at", 400, "created_at is invalid.")
INVALID_DAYS = error_code("invalid_days", 400, "days is invalid.")
INVALID_DEFAULT_PARENT = error_code("invalid_default_parent", 400, "default_parent is invalid.")
INVALID_DRY_RUN = error_code("invalid_dry_run", 400, "dry_run is invalid.")
INVALID_DRY_RUN_ID = error_code("invalid_dry_run_id", 400, "A dry run names no dry run.")
INVALID_EMBEDDINGS = error_code("invalid_embeddings", 400, "embeddings is invalid.")
INVALID_ERROR = error_code("invalid_error", 400, "error is invalid.")
INVALID_EXPAND_RELATED = error_code("invalid_expand_related", 400, "expand_related is invalid.")
INVALID_EXCLUDED_ITEMS = error_code("invalid_excluded_items", 400, "excluded_items takes a list of item ids.")
INVALID_EXTERNAL_ID = error_code("invalid_external_id", 400, "external_id is invalid.")
INVALID_EXTERNAL_ID_PREFIX = error_code("invalid_external_id_prefix", 400, "external_id_prefix is invalid.")
INVALID_FORMAT = error_code("invalid_format", 400, "format is invalid.")
INVALID_GRAPH = error_code("invalid_graph", 400, "The conversation graph is inconsistent.")
INVALID_GROUP_ID = error_code("invalid_group_id", 400, "group_id is invalid.")
INVALID_HELPFUL = error_code("invalid_helpful", 400, "helpful is invalid.")
INVALID_HELPFULNESS = error_code("invalid_helpfulness", 400, "helpfulness must be within [0, 1].")
INVALID_IDS = error_code("invalid_ids", 400, "ids is invalid.")
INVALID_IMPORTANCE = error_code("invalid_importance", 400, "importance is invalid.")
INVALID_IMPORTANT = error_code("invalid_important", 400, "important is invalid.")
INVALID_INCLUDE_SUPERSEDED = error_code("invalid_include_superseded", 400, "include_superseded is invalid.")
INVALID_ITEM = error_code("invalid_item", 400, "item is invalid.")
INVALID_ITEM_IDS = error_code("invalid_item_ids", 400, "item_ids is invalid.")
INVALID_ITEMS = error_code("invalid_items", 400, "items is invalid.")
INVALID_ITERATION = error_code("invalid_iteration", 400, "iteration is invalid.")
INVALID_KEY = error_code("invalid_key", 400, "key is invalid.")
INVALID_KIND = error_code("invalid_kind", 400, "kind is invalid.")
INVALID_KINDS = error_code("invalid_kinds", 400, "kinds is invalid.")
INVALID_LAYER = error_code("invalid_layer", 400, "The layer is of the wrong kind for this operation.")
INVALID_LAYER_EXTERNAL_ID = error_code("invalid_layer_external_id", 400, "layer_external_id is invalid.")
INVALID_LAYER_KIND_TTL_DAYS = error_code("invalid_layer_kind_ttl_days", 400, "layer_kind_ttl_days is invalid.")
INVALID_LIMIT = error_code("invalid_limit", 400, "limit is invalid.")
INVALID_MAX_CONFIDENCE = error_code("invalid_max_confidence", 400, "max_confidence is invalid.")
INVALID_MESSAGE = error_code("invalid_message", 400, "message is invalid.")
INVALID_MESSAGES = error_code("invalid_messages", 400, "messages is invalid.")
INVALID_MESSAGES_RETENTION_DAYS = error_code(
    "invalid_messages_retention_days", 400, "messages_retention_days is invalid."
)
INVALID_METADATA = error_code("invalid_metadata", 400, "metadata is invalid.")
INVALID_MIN_CONFIDENCE = error_code("invalid_min_confidence", 400, "min_confidence is invalid.")
INVALID_MODEL = error_code("invalid_model", 400, "model is invalid.")
INVALID_NAME = error_code("invalid_name", 400, "name is invalid.")
INVALID_NOTE = error_code("invalid_note", 400, "note is invalid.")
INVALID_OFFSET = error_code("invalid_offset", 400, "offset is invalid.")
INVALID_ON_DUPLICATE = error_code("invalid_on_duplicate", 400, "on_duplicate is invalid.")
INVALID_OUTCOME = error_code("invalid_outcome", 400, "outcome is invalid.")
INVALID_PAGE = error_code("invalid_page", 400, "page is invalid.")
INVALID_PAGE_SIZE = error_code("invalid_page_size", 400, "page_size is invalid.")
INVALID_PARENT = error_code("invalid_parent", 400, "parent is invalid.")
INVALID_PERSONALIZATION = error_code("invalid_personalization", 400, "personalization is invalid.")
INVALID_PINNED = error_code("invalid_pinned", 400, "pinned is invalid.")
INVALID_PREFERRED_FORMAT = error_code("invalid_preferred_format", 400, "preferred_format is invalid.")
INVALID_PRIORITY = error_code("invalid_priority", 400, "priority is invalid.")
INVALID_PROFILE = error_code("invalid_profile", 400, "profile is invalid.")
INVALID_Q = error_code("invalid_q", 400, "q is invalid.")
INVALID_QUERY = error_code("invalid_query", 400, "query is invalid.")
INVALID_RANKING = error_code("invalid_ranking", 400, "ranking is invalid.")
INVALID_RANKING_FUNCTION = error_code("invalid_ranking_function", 400, "ranking_function is invalid.")
INVALID_RANKING_WEIGHTS = error_code("invalid_ranking_weights", 400, "ranking_weights is invalid.")
INVALID_RECORDS_RETENTION_DAYS = error_code("invalid_records_retention_days", 400, "records_retention_days is invalid.")
INVALID_RETRIEVAL_LIMIT = error_code("invalid_retrieval_limit", 400, "retrieval_limit is invalid.")
INVALID_ROLE = error_code("invalid_role", 400, "role is invalid.")
INVALID_SAFETY_MARGIN = error_code("invalid_safety_margin", 400, "safety_margin is invalid.")
INVALID_SCOPES = error_code("invalid_scopes", 400, "scopes must be a non-empty subset of the known scopes.")
INVALID_SIGNATURE = error_code("invalid_signature", 400, "signature is invalid.")
INVALID_SINCE = error_code("invalid_since", 400, "since is invalid.")
INVALID_SKIP_IF_UNCHANGED = error_code("invalid_skip_if_unchanged", 400, "skip_if_unchanged is invalid.")
INVALID_SOLUTION = error_code("invalid_solution", 400, "solution is invalid.")
INVALID_SOURCE = error_code("invalid_source", 400, "source is invalid.")
INVALID_SOURCE_REFS = error_code("invalid_source_refs", 400, "source_refs is invalid.")
INVALID_STATE = error_code("invalid_state", 400, "Unknown proposal state.")
INVALID_SUPERSEDES = error_code("invalid_supersedes", 400, "supersedes is invalid.")
INVALID_TARGET = error_code("invalid_target", 400, "target is invalid.")
INVALID_TARGET_ID = error_code("invalid_target_id", 400, "target_id is invalid.")
INVALID_TARGET_KIND = error_code("invalid_target_kind", 400, "target_kind is invalid.")
INVALID_TASK = error_code("invalid_task", 400, "task is invalid.")
INVALID_TASK_IDS = error_code("invalid_task_ids", 400, "task_ids is invalid.")
INVALID_TEMPLATE = error_code("invalid_template", 400, "The template body is empty, too long, or does not parse.")
INVALID_TEXT = error_code("invalid_text", 400, "text is invalid.")
INVALID_TIMEOUT_MS = error_code("invalid_timeout_ms", 400, "timeout_ms is invalid.")
INVALID_TITLE = error_code("invalid_title", 400, "title is invalid.")
INVALID_TOKEN_BUDGET = error_code("invalid_token_budget", 400, "token_budget is invalid.")
INVALID_TOKENS_USED = error_code("invalid_tokens_used", 400, "tokens_used is invalid.")
INVALID_TOOLS = error_code("invalid_tools", 400, "tools is invalid.")
INVALID_TRACE_ID = error_code("invalid_trace_id", 400, "trace_id is invalid.")
INVALID_TYPE = error_code("invalid_type", 400, "The type is not one this kind of item takes.")
INVALID_TYPE_FILTERS = error_code("invalid_type_filters", 400, "type_filters takes a limited number of short types.")
INVALID_TYPES = error_code("invalid_types", 400, "types is invalid.")
INVALID_UNTIL = error_code("invalid_until", 400, "until is invalid.")
INVALID_UPDATE_INTERVAL_SECONDS = error_code(
    "invalid_update_interval_seconds", 400, "update_interval_seconds is invalid."
)
INVALID_UPDATE_ON_CHANGES = error_code("invalid_update_on_changes", 400, "update_on_changes is invalid.")
INVALID_USED = error_code("invalid_used", 400, "used is invalid.")
INVALID_USER = error_code("invalid_user", 400, "user is invalid.")
INVALID_VALUE = error_code("invalid_value", 400, "value is invalid.")
INVALID_WEIGHT = error_code("invalid_weight", 400, "weight is invalid.")

field_codes(
    action=INVALID_ACTION,
    actor=INVALID_ACTOR,
    agent_type=INVALID_AGENT_TYPE,
    agent_types=INVALID_AGENT_TYPES,
    base_url=INVALID_BASE_URL,
    body=INVALID_BODY,
    by_type=INVALID_BY_TYPE,
    confidence=INVALID_CONFIDENCE,
    content=INVALID_CONTENT,
    context_position=INVALID_CONTEXT_POSITION,
    context_window=INVALID_CONTEXT_WINDOW,
    conversation_id=INVALID_CONVERSATION_ID,
    conversation_preset=INVALID_CONVERSATION_PRESET,
    created_at=INVALID_CREATED_AT,
    days=INVALID_DAYS,
    default_parent=INVALID_DEFAULT_PARENT,
    dry_run=INVALID_DRY_RUN,
    dry_run_id=INVALID_DRY_RUN_ID,
    embeddings=INVALID_EMBEDDINGS,
    error=INVALID_ERROR,
    expand_related=INVALID_EXPAND_RELATED,
    excluded_items=INVALID_EXCLUDED_ITEMS,
    external_id=INVALID_EXTERNAL_ID,
    external_id_prefix=INVALID_EXTERNAL_ID_PREFIX,
    format=INVALID_FORMAT,
    graph=INVALID_GRAPH,
    group_id=INVALID_GROUP_ID,
    helpful=INVALID_HELPFUL,
    helpfulness=INVALID_HELPFULNESS,
    ids=INVALID_IDS,
    importance=INVALID_IMPORTANCE,
    important=INVALID_IMPORTANT,
    include_superseded=INVALID_INCLUDE_SUPERSEDED,
    item=INVALID_ITEM,
    item_ids=INVALID_ITEM_IDS,
    items=INVALID_ITEMS,
    iteration=INVALID_ITERATION,
    key=INVALID_KEY,
    kind=INVALID_KIND,
    kinds=INVALID_KINDS,
    layer=INVALID_LAYER,
    layer_external_id=INVALID_LAYER_EXTERNAL_ID,
    layer_kind_ttl_days=INVALID_LAYER_KIND_TTL_DAYS,
    limit=INVALID_LIMIT,
    max_confidence=INVALID_MAX_CONFIDENCE,
    message=INVALID_MESSAGE,
    messages=INVALID_MESSAGES,
    messages_retention_days=INVALID_MESSAGES_RETENTION_DAYS,
    metadata=INVALID_METADATA,
    min_confidence=INVALID_MIN_CONFIDENCE,
    model=INVALID_MODEL,
    name=INVALID_NAME,
    note=INVALID_NOTE,
    offset=INVALID_OFFSET,
    on_duplicate=INVALID_ON_DUPLICATE,
    outcome=INVALID_OUTCOME,
    page=INVALID_PAGE,
    page_size=INVALID_PAGE_SIZE,
    parent=INVALID_PARENT,
    personalization=INVALID_PERSONALIZATION,
    pinned=INVALID_PINNED,
    preferred_format=INVALID_PREFERRED_FORMAT,
    priority=INVALID_PRIORITY,
    profile=INVALID_PROFILE,
    q=INVALID_Q,
    query=INVALID_QUERY,
    query_vector=INVALID_QUERY_VECTOR,
    ranking=INVALID_RANKING,
    ranking_function=INVALID_RANKING_FUNCTION,
    ranking_weights=INVALID_RANKING_WEIGHTS,
    records_retention_days=INVALID_RECORDS_RETENTION_DAYS,
    retrieval_limit=INVALID_RETRIEVAL_LIMIT,
    role=INVALID_ROLE,
    safety_margin=INVALID_SAFETY_MARGIN,
    scopes=INVALID_SCOPES,
    signature=INVALID_SIGNATURE,
    since=INVALID_SINCE,
    skip_if_unchanged=INVALID_SKIP_IF_UNCHANGED,
    solution=INVALID_SOLUTION,
    source=INVALID_SOURCE,
    source_refs=INVALID_SOURCE_REFS,
    state=INVALID_STATE,
    supersedes=INVALID_SUPERSEDES,
    target=INVALID_TARGET,
    target_id=INVALID_TARGET_ID,
    target_kind=INVALID_TARGET_KIND,
    task=INVALID_TASK,
    task_ids=INVALID_TASK_IDS,
    template=INVALID_TEMPLATE,
    text=INVALID_TEXT,
    timeout_ms=INVALID_TIMEOUT_MS,
    title=INVALID_TITLE,
    token_budget=INVALID_TOKEN_BUDGET,
    tokens_used=INVALID_TOKENS_USED,
    tools=INVALID_TOOLS,
    trace_id=INVALID_TRACE_ID,
    type=INVALID_TYPE,
    type_filters=INVALID_TYPE_FILTERS,
    types=INVALID_TYPES,
    until=INVALID_UNTIL,
    update_interval_seconds=INVALID_UPDATE_INTERVAL_SECONDS,
    update_on_changes=INVALID_UPDATE_ON_CHANGES,
    used=INVALID_USED,
    user=INVALID_USER,
    value=INVALID_VALUE,
    weight=INVALID_WEIGHT,
)


def field_code(field: str) -> ErrorCode:
    """The code of a validation error in the top-level input field `field`: the one mapped to it. A field
    no catalogue maps (a page form's) keeps the derived `invalid_<field>`, unregistered."""
    found = FIELD_CODES.get(field)
    return found if found is not None else ErrorCode(f"invalid_{field}", 400, f"{field} is invalid.")
