"""Writes for layers, their configurations and their items."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.core import background, events, tokenizer
from apps.core.errors import Conflict, DomainError, InvalidInput, NotFound, TooLarge
from apps.core.integrity import violated_constraint
from apps.core.versions import content_changed
from apps.layers.models import (
    ITEM_TYPES,
    KIND_RANK,
    LAYER_CONFIG_DEFAULTS,
    Item,
    ItemKind,
    Layer,
    LayerConfig,
    LayerKind,
    MessageRole,
    Priority,
)
from apps.layers.signals import changes_counted, item_prepared, messages_created
from apps.workspaces.models import Workspace

# Stored token counts use the default model's encoding; assembly recounts with the request's model.
UNIQUE_EXTERNAL_ID = "uniq_layer_external_id"  # Layer.Meta.constraints


def layer_create_root(*, workspace: Workspace, name: str) -> Layer:
    """The workspace's company layer (exactly one per workspace)."""
    layer = Layer.objects.create(workspace=workspace, kind=LayerKind.COMPANY, name=name)
    _config_create(layer=layer)
    return layer


def _config_create(*, layer: Layer) -> LayerConfig:
    interval, changes, personalization = LAYER_CONFIG_DEFAULTS[layer.kind]
    return LayerConfig.objects.create(
        layer=layer, update_interval_seconds=interval, update_on_changes=changes, personalization=personalization
    )


def _check_parent(*, kind: str, parent: Layer | None) -> None:
    if kind == LayerKind.COMPANY:
        raise InvalidInput("each workspace has exactly one company layer, created with it", code="company_exists")
    if parent is None:
        raise InvalidInput(f"a {kind} layer needs a parent", code="invalid_parent")
    if KIND_RANK[parent.kind] >= KIND_RANK[kind]:
        raise InvalidInput(
            f"a {kind} layer cannot sit under a {parent.kind} layer (parents must be of a higher kind)",
            code="invalid_parent",
            details={"kind": kind, "parent_kind": parent.kind},
        )


@transaction.atomic
def layer_create(
    *, workspace: Workspace, kind: str, name: str, parent: Layer | None, external_id: str | None = None
) -> Layer:
    _check_parent(kind=kind, parent=parent)
    if parent is not None and parent.workspace_id != workspace.pk:
        raise NotFound("parent layer not found", code="layer_not_found")
    layer = Layer(workspace=workspace, kind=kind, name=name, parent=parent, external_id=external_id)
    _save_layer(layer)
    _config_create(layer=layer)
    return layer


def _save_layer(layer: Layer) -> None:
    """Insert or update; the unique constraint decides a taken external id (no check-then-insert race:
    of two concurrent creates with one external id, one commits and the other gets the 409)."""
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction stays usable
            layer.save()
    except IntegrityError as exc:
        if violated_constraint(exc) != UNIQUE_EXTERNAL_ID:
            raise
        raise Conflict(
            f"a {layer.kind} layer with external_id {layer.external_id!r} exists", code="duplicate_external_id"
        ) from exc


@transaction.atomic
def layer_update(*, layer: Layer, changes: dict[str, Any]) -> Layer:
    """Rename, re-parent or change the external id. The kind never changes."""
    if "parent" in changes:
        parent = changes["parent"]
        if layer.kind == LayerKind.COMPANY:
            raise InvalidInput("the company layer has no parent", code="invalid_parent")
        _check_parent(kind=layer.kind, parent=parent)
        layer.parent = parent
    if "name" in changes:
        layer.name = changes["name"]
    if "external_id" in changes:
        layer.external_id = changes["external_id"]
    _save_layer(layer)
    return layer


def layer_delete(*, layer: Layer) -> None:
    """Delete a layer with its descendants and their items; the company root stays."""
    if layer.kind == LayerKind.COMPANY:
        raise InvalidInput("the company layer cannot be deleted", code="cannot_delete_root")
    layer.delete()


@dataclass
class ItemInput:
    """Validated fields of one item, as the API edge hands them to the service."""

    kind: str
    content: str
    type: str = ""
    title: str = ""
    external_id: str | None = None
    created_at: datetime | None = None
    role: str = ""
    parent: int | None = None
    task_ids: list[str] = field(default_factory=list)
    confidence: float | None = None
    priority: str = ""
    group_id: str = ""
    agent_types: list[str] = field(default_factory=list)
    source_refs: list[str] = field(default_factory=list)
    importance: float = 0.5
    pinned: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


def content_hash(*, title: str, content: str) -> str:
    return hashlib.sha256(f"{title}\x00{content}".encode()).hexdigest()


def item_errors(data: ItemInput) -> dict[str, DomainError]:
    """Every reason `data` is not a valid item, by field, in the order they are checked ({} when fine).

    The one validator: the API answers with the first, the layer page shows them all at once.
    """
    errors: dict[str, DomainError] = {}
    if data.kind not in ItemKind.values:
        errors["kind"] = InvalidInput(f"kind must be one of {', '.join(ItemKind.values)}", code="invalid_kind")
    allowed = ITEM_TYPES.get(data.kind)
    if allowed is not None and data.type not in allowed:
        shown = ", ".join(t or '""' for t in allowed)
        errors["type"] = InvalidInput(f"type of a {data.kind} must be one of {shown}", code="invalid_type")
    if not data.content.strip():
        errors["content"] = InvalidInput("content must not be empty", code="invalid_content")
    elif len(data.content) > settings.ITEM_MAX_CONTENT_CHARS:
        limit = settings.ITEM_MAX_CONTENT_CHARS
        errors["content"] = TooLarge(
            f"content is limited to {limit} characters per item; split long documents into several items",
            details={"limit_chars": limit, "chars": len(data.content)},
        )
    if data.kind == ItemKind.MESSAGE:
        if data.role not in MessageRole.values:
            errors["role"] = InvalidInput(
                f"a message needs a role: {', '.join(MessageRole.values)}", code="invalid_role"
            )
    elif data.role or data.parent is not None:
        errors["role"] = InvalidInput("role and parent apply to messages only", code="invalid_role")
    if data.priority and data.priority not in Priority.values:
        errors["priority"] = InvalidInput(
            f"priority must be one of {', '.join(Priority.values)}", code="invalid_priority"
        )
    if data.confidence is not None and not 0.0 <= data.confidence <= 1.0:
        errors["confidence"] = InvalidInput("confidence must be within [0, 1]", code="invalid_confidence")
    if not 0.0 <= data.importance <= 1.0:
        errors["importance"] = InvalidInput("importance must be within [0, 1]", code="invalid_importance")
    return errors


def _check_item(data: ItemInput) -> None:
    errors = item_errors(data)
    if errors:
        raise next(iter(errors.values()))


def _build_item(*, layer: Layer, data: ItemInput, now: datetime) -> Item:
    _check_item(data)
    priority = data.priority or (Priority.MEDIUM if data.kind == ItemKind.PACKAGE else "")
    return Item(
        workspace_id=layer.workspace_id,
        layer=layer,
        kind=data.kind,
        type=data.type,
        title=data.title,
        content=data.content,
        external_id=data.external_id or None,
        token_count=tokenizer.count_tokens(
            f"{data.title}\n{data.content}" if data.title else data.content,
            tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding,
        ),
        content_hash=content_hash(title=data.title, content=data.content),
        importance=data.importance,
        pinned=data.pinned,
        metadata=data.metadata,
        created_at=data.created_at or now,
        role=data.role,
        parent_id=data.parent,
        task_ids=data.task_ids,
        confidence=data.confidence,
        priority=priority,
        group_id=data.group_id,
        agent_types=data.agent_types,
        source_refs=data.source_refs,
    )


def _check_parents(*, layer: Layer, items: Sequence[Item]) -> None:
    """Message parents must be messages of the same workspace."""
    wanted = {item.parent_id for item in items if item.parent_id is not None}
    if not wanted:
        return
    found = set(
        Item.objects.filter(workspace_id=layer.workspace_id, kind=ItemKind.MESSAGE, pk__in=wanted).values_list(
            "pk", flat=True
        )
    )
    missing = sorted(wanted - found)
    if missing:
        raise NotFound(f"parent message {missing[0]} not found", code="parent_not_found", details={"ids": missing})


def _check_external_ids(*, layer: Layer, items: Sequence[Item]) -> None:
    ids = [external_id for item in items if (external_id := item.external_id)]
    duplicates = sorted({x for x in ids if ids.count(x) > 1})
    if duplicates:
        raise Conflict(f"external_id {duplicates[0]!r} repeats in the request", code="duplicate_external_id")
    found = Item.objects.filter(layer=layer, external_id__in=ids).values_list("external_id", flat=True)
    taken = sorted(x for x in found if x is not None)  # never None: matched one of `ids`
    if taken:
        raise Conflict(
            f"an item with external_id {taken[0]!r} already exists in this layer",
            code="duplicate_external_id",
            details={"external_ids": taken},
        )


def items_create(*, layer: Layer, items: Sequence[ItemInput]) -> list[Item]:
    """Create items all or nothing; embeddings are computed in the background after commit."""
    if len(items) > settings.BULK_MAX_ITEMS:
        raise InvalidInput(f"at most {settings.BULK_MAX_ITEMS} items per request", code="too_many_items")
    total = sum(len(data.content) + len(data.title) for data in items)
    if total > settings.REQUEST_MAX_CONTENT_CHARS:
        limit = settings.REQUEST_MAX_CONTENT_CHARS
        raise TooLarge(
            f"a request may carry at most {limit} characters of content; send the items in several requests",
            code="request_content_too_large",
            details={"limit_chars": limit, "chars": total},
        )
    now = timezone.now()
    built = []
    for index, data in enumerate(items):
        try:
            built.append(_build_item(layer=layer, data=data, now=now))
        except (InvalidInput, TooLarge) as exc:
            if len(items) > 1:
                exc.details = {**exc.details, "index": index}
                exc.message = f"item {index}: {exc.message}"
            raise
    _check_parents(layer=layer, items=built)
    _check_external_ids(layer=layer, items=built)
    for item in built:
        _auto_importance(item)
    try:
        with transaction.atomic():
            created = Item.objects.bulk_create(built)
            _note_changes(layer=layer, count=len(created))
            content_changed(layer.workspace_id)  # bulk_create sends no signals
            from apps.layers.tasks import embed_pending_items

            background.enqueue(embed_pending_items, None)  # the sweep of all workspaces: fair, see embedder.py
            events.status_changed(layer.workspace_id)
            if any(item.kind == ItemKind.MESSAGE for item in created):
                messages_created.send(sender=Item, layer_id=layer.pk)  # after the embedding sweep is queued
    except IntegrityError as exc:  # a concurrent writer took an external_id between check and insert
        raise Conflict("an item with this external_id already exists", code="duplicate_external_id") from exc
    return created


def _auto_importance(item: Item) -> None:
    """Let the higher apps adjust a new or re-texted item before it is saved (e.g. decision importance)."""
    item_prepared.send(sender=Item, item=item)


def _note_changes(*, layer: Layer, count: int) -> None:
    """Count changes toward the layer's change-based summary trigger."""
    from django.db.models import F

    LayerConfig.objects.filter(layer=layer).update(changes_since_summary=F("changes_since_summary") + count)
    changes_counted.send(sender=Layer, layer_id=layer.pk)  # summaries: past the threshold, summarize after commit


# The fields a caller may change on an existing item (the kind, layer and parent never change).
ITEM_EDITABLE_FIELDS = (
    "type",
    "title",
    "content",
    "external_id",
    "created_at",
    "role",
    "task_ids",
    "confidence",
    "priority",
    "group_id",
    "agent_types",
    "source_refs",
    "importance",
    "pinned",
    "metadata",
)


def _updated_input(*, item: Item, changes: dict[str, Any]) -> ItemInput:
    data = ItemInput(
        kind=item.kind,
        content=item.content,
        type=item.type,
        title=item.title,
        external_id=item.external_id,
        created_at=item.created_at,
        role=item.role,
        parent=item.parent_id,
        task_ids=item.task_ids,
        confidence=item.confidence,
        priority=item.priority,
        group_id=item.group_id,
        agent_types=item.agent_types,
        source_refs=item.source_refs,
        importance=item.importance,
        pinned=item.pinned,
        metadata=item.metadata,
    )
    for key, value in changes.items():
        setattr(data, key, value)
    return data


def item_update_errors(*, item: Item, changes: dict[str, Any]) -> dict[str, DomainError]:
    """Every reason `changes` cannot be applied to `item`, by field ({} when fine); `item_update` raises the first."""
    unknown = set(changes) - set(ITEM_EDITABLE_FIELDS)
    if unknown:
        return {"__all__": InvalidInput(f"cannot change {', '.join(sorted(unknown))}", code="invalid_fields")}
    data = _updated_input(item=item, changes=changes)
    errors = item_errors(data)
    if data.external_id and data.external_id != item.external_id:
        if Item.objects.filter(layer_id=item.layer_id, external_id=data.external_id).exclude(pk=item.pk).exists():
            errors["external_id"] = Conflict(
                f"an item with external_id {data.external_id!r} exists", code="duplicate_external_id"
            )
    return errors


@transaction.atomic
def item_update(*, item: Item, changes: dict[str, Any]) -> Item:
    """Apply a partial update; a content or title change clears the embedding for re-embedding."""
    errors = item_update_errors(item=item, changes=changes)
    if errors:
        raise next(iter(errors.values()))
    rebuilt = _build_item(layer=item.layer, data=_updated_input(item=item, changes=changes), now=item.created_at)
    text_changed = rebuilt.content_hash != item.content_hash
    for name in set(ITEM_EDITABLE_FIELDS) | {"token_count", "content_hash"}:
        setattr(item, name, getattr(rebuilt, name))
    if text_changed:
        item.embedding = None
        item.embedding_model = ""
        _auto_importance(item)  # an edit that now states a decision raises it too
    item.save()
    if text_changed:
        _note_changes(layer=item.layer, count=1)
        from apps.layers.tasks import embed_pending_items

        background.enqueue(embed_pending_items, None)
    return item


def item_delete(*, item: Item) -> None:
    with transaction.atomic():
        _note_changes(layer=item.layer, count=1)
        item.delete()
