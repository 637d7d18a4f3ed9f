"""Writes for layers, their configurations and their items."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, FloatField, Value
from django.db.models.functions import Greatest, Least
from django.utils import timezone

from apps.core import background, events, tokenizer
from apps.core.connections import connection_release
from apps.core.errors import INVALID_FIELDS, Conflict, DomainError, InvalidInput, NotFound, TooLarge
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
    INVALID_TYPE,
)
from apps.core.integrity import violated_constraint
from apps.core.versions import content_changed
from apps.layers.duplicates import ON_DUPLICATE, MergePlan, merge_into, merge_plan
from apps.layers.errors import (
    CANNOT_DELETE_ROOT,
    COMPANY_EXISTS,
    DUPLICATE_EXTERNAL_ID,
    LAYER_NOT_FOUND,
    PARENT_NOT_FOUND,
    REQUEST_CONTENT_TOO_LARGE,
    TOO_MANY_ITEMS,
)
from apps.layers.models import (
    ITEM_TYPES,
    KIND_RANK,
    Item,
    ItemKind,
    Layer,
    LayerKind,
    MessageRole,
    Priority,
)
from apps.layers.signals import changes_counted, item_prepared, layer_created, messages_created
from apps.layers.supersession import items_supersede, supersedes_check
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget, Workspace

# Stored token counts use the default model's encoding; assembly recounts with the request's model.
UNIQUE_EXTERNAL_ID = "uniq_layer_external_id"  # Layer.Meta.constraints


def layer_create_root(*, workspace: Workspace, name: str) -> Layer:
    """The workspace's company layer (exactly one per workspace)."""
    layer = Layer.objects.create(workspace=workspace, kind=LayerKind.COMPANY, name=name)
    layer_created.send(sender=Layer, layer=layer)
    return layer


def _check_parent(*, kind: str, parent: Layer | None) -> None:
    if kind == LayerKind.COMPANY:
        raise InvalidInput("each workspace has exactly one company layer, created with it", code=COMPANY_EXISTS)
    if parent is None:
        raise InvalidInput(f"a {kind} layer needs a parent", code=INVALID_PARENT)
    if KIND_RANK[parent.kind] >= KIND_RANK[kind]:
        raise InvalidInput(
            f"a {kind} layer cannot sit under a {parent.kind} layer (parents must be of a higher kind)",
            code=INVALID_PARENT,
            details={"kind": kind, "parent_kind": parent.kind},
        )


@transaction.atomic
def layer_create(
    *, workspace: Workspace, kind: str, name: str, parent: Layer | None, external_id: str | None = None
) -> Layer:
    _check_parent(kind=kind, parent=parent)
    if parent is not None and parent.workspace_id != workspace.pk:
        raise NotFound("parent layer not found", code=LAYER_NOT_FOUND)
    layer = Layer(workspace=workspace, kind=kind, name=name, parent=parent, external_id=external_id)
    _save_layer(layer)
    layer_created.send(sender=Layer, layer=layer)
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
            f"a {layer.kind} layer with external_id {layer.external_id!r} exists", code=DUPLICATE_EXTERNAL_ID
        ) from exc


@transaction.atomic
def layer_update(*, layer: Layer, changes: dict[str, Any]) -> Layer:
    """Rename, re-parent or change the external id. The kind never changes."""
    if "parent" in changes:
        parent = changes["parent"]
        if layer.kind == LayerKind.COMPANY:
            raise InvalidInput("the company layer has no parent", code=INVALID_PARENT)
        _check_parent(kind=layer.kind, parent=parent)
        layer.parent = parent
    if "name" in changes:
        layer.name = changes["name"]
    if "external_id" in changes:
        layer.external_id = changes["external_id"]
    _save_layer(layer)
    return layer


# The layer and its descendants, locked in id order; then their items, locked.
_LOCK_SUBTREE_SQL = (
    "WITH RECURSIVE sub(id) AS (SELECT %s::bigint UNION ALL "
    "SELECT l.id FROM layers_layer l JOIN sub ON l.parent_id = sub.id) "
    "SELECT id FROM layers_layer WHERE id IN (SELECT id FROM sub) ORDER BY id FOR UPDATE"
)
_LOCK_ITEMS_SQL = (
    "SELECT count(*) FROM (SELECT 1 FROM layers_item WHERE layer_id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE) s"
)


def layer_delete(*, layer: Layer) -> None:
    """Delete a layer with its descendants and their items; the company root stays.

    Background work writes rows that point at layers and items (summaries, communities and their
    members, access counts) while a delete runs. The cascade collects those rows, then deletes; a row
    committed in between survived it and failed the foreign-key check at the delete's commit (a 500),
    or deadlocked with it. So the subtree and its items are locked first: writers under way finish
    before the cascade looks, later ones wait for the delete and then find their rows gone.
    """
    if layer.kind == LayerKind.COMPANY:
        raise InvalidInput("the company layer cannot be deleted", code=CANNOT_DELETE_ROOT)
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(_LOCK_SUBTREE_SQL, [layer.pk])
        subtree = [row[0] for row in cur.fetchall()]
        if not subtree:  # deleted meanwhile
            return
        cur.execute(_LOCK_ITEMS_SQL, [subtree])
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
    helpfulness: float = 0.5  # strategies start where their author puts them (apps/consumption)
    on_duplicate: str = "merge"  # "keep": stored even when it repeats an item (apps/layers/duplicates.py)
    supersedes: list[int] = field(default_factory=list)  # items this one replaces (apps/layers/supersession.py)


def content_hash(*, title: str, content: str) -> str:
    return hashlib.sha256(f"{title}\x00{content}".encode()).hexdigest()


def item_errors(data: ItemInput) -> dict[str, DomainError]:
    """Every reason `data` is not a valid item, by field, in the order they are checked ({} when fine).

    The one validator: the API answers with the first, the layer page shows them all at once.
    """
    errors: dict[str, DomainError] = {}
    if data.kind not in ItemKind.values:
        errors["kind"] = InvalidInput(f"kind must be one of {', '.join(ItemKind.values)}", code=INVALID_KIND)
    allowed = ITEM_TYPES.get(data.kind)
    if allowed is not None and data.type not in allowed:
        shown = ", ".join(t or '""' for t in allowed)
        errors["type"] = InvalidInput(f"type of a {data.kind} must be one of {shown}", code=INVALID_TYPE)
    if not data.content.strip():
        errors["content"] = InvalidInput("content must not be empty", code=INVALID_CONTENT)
    elif len(data.content) > settings.ITEM_MAX_CONTENT_CHARS:
        limit = settings.ITEM_MAX_CONTENT_CHARS
        errors["content"] = TooLarge(
            f"content is limited to {limit} characters per item; split long documents into several items",
            details={"limit_chars": limit, "chars": len(data.content)},
        )
    if data.kind == ItemKind.MESSAGE:
        if data.role not in MessageRole.values:
            errors["role"] = InvalidInput(f"a message needs a role: {', '.join(MessageRole.values)}", code=INVALID_ROLE)
    elif data.role or data.parent is not None:
        errors["role"] = InvalidInput("role and parent apply to messages only", code=INVALID_ROLE)
    if data.priority and data.priority not in Priority.values:
        errors["priority"] = InvalidInput(
            f"priority must be one of {', '.join(Priority.values)}", code=INVALID_PRIORITY
        )
    if data.confidence is not None and not 0.0 <= data.confidence <= 1.0:
        errors["confidence"] = InvalidInput("confidence must be within [0, 1]", code=INVALID_CONFIDENCE)
    if not 0.0 <= data.importance <= 1.0:
        errors["importance"] = InvalidInput("importance must be within [0, 1]", code=INVALID_IMPORTANCE)
    if not 0.0 <= data.helpfulness <= 1.0:
        errors["helpfulness"] = InvalidInput("helpfulness must be within [0, 1]", code=INVALID_HELPFULNESS)
    if data.on_duplicate not in ON_DUPLICATE:
        errors["on_duplicate"] = InvalidInput(
            f"on_duplicate must be one of {', '.join(ON_DUPLICATE)}", code=INVALID_ON_DUPLICATE
        )
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
        helpfulness=data.helpfulness,
        metadata=data.metadata,
        created_at=data.created_at or now,
        role=data.role,
        parent_id=data.parent,
        task_ids=list(dict.fromkeys(data.task_ids)),  # a repeated id is one membership (communities)
        confidence=data.confidence,
        priority=priority,
        group_id=data.group_id,
        agent_types=data.agent_types,
        source_refs=data.source_refs,
        mergeable=data.on_duplicate != "keep",
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
        raise NotFound(f"parent message {missing[0]} not found", code=PARENT_NOT_FOUND, details={"ids": missing})


def _check_external_ids(*, layer: Layer, items: Sequence[Item]) -> None:
    ids = [external_id for item in items if (external_id := item.external_id)]
    duplicates = sorted({x for x in ids if ids.count(x) > 1})
    if duplicates:
        raise Conflict(f"external_id {duplicates[0]!r} repeats in the request", code=DUPLICATE_EXTERNAL_ID)
    found = Item.objects.filter(layer=layer, external_id__in=ids).values_list("external_id", flat=True)
    taken = sorted(x for x in found if x is not None)  # never None: matched one of `ids`
    if taken:
        raise Conflict(
            f"an item with external_id {taken[0]!r} already exists in this layer",
            code=DUPLICATE_EXTERNAL_ID,
            details={"external_ids": taken},
        )


# Past this many characters a request's token counting (~1 ms per 10k characters) runs with the
# request's pooled connection given back.
ITEMS_COUNT_OFF_CONNECTION_CHARS = 20_000


def items_create(*, layer: Layer, items: Sequence[ItemInput]) -> list[Item]:
    """`items_write`'s items: one per input, the stored item each one is now (new or merged into)."""
    return items_write(layer=layer, items=items).items


@dataclass(frozen=True)
class ItemsWritten:
    """The outcome of a write: per input, the item that holds it, and which inputs were merged into
    an item stored before (or into an earlier input of the same request) instead of created."""

    items: list[Item]
    merged: tuple[int, ...]  # indexes of `items` that repeat another item (apps/layers/duplicates.py)


def items_write(*, layer: Layer, items: Sequence[ItemInput]) -> ItemsWritten:
    """Create items all or nothing; embeddings are computed in the background after commit.

    An item that exactly repeats a stored item of the layer (or an earlier one of the request) is
    merged into it unless it asks `on_duplicate: "keep"`; `supersedes` marks the named items as
    replaced by the item that holds it."""
    if len(items) > settings.BULK_MAX_ITEMS:
        raise InvalidInput(f"at most {settings.BULK_MAX_ITEMS} items per request", code=TOO_MANY_ITEMS)
    total = sum(len(data.content) + len(data.title) for data in items)
    if total > settings.REQUEST_MAX_CONTENT_CHARS:
        limit = settings.REQUEST_MAX_CONTENT_CHARS
        raise TooLarge(
            f"a request may carry at most {limit} characters of content; send the items in several requests",
            code=REQUEST_CONTENT_TOO_LARGE,
            details={"limit_chars": limit, "chars": total},
        )
    now = timezone.now()
    if total > ITEMS_COUNT_OFF_CONNECTION_CHARS:
        connection_release()  # counting their tokens holds no connection
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
    superseded = [old for data in items for old in data.supersedes]
    if superseded:
        supersedes_check(workspace_id=layer.workspace_id, ids=superseded)
    for item in built:
        _auto_importance(item)
    try:
        with transaction.atomic():
            plan = merge_plan(layer=layer, items=built, mergeable=[item.mergeable for item in built])
            fresh = [i for i in range(len(built)) if i not in plan.into_existing and i not in plan.into_batch]
            previous = _previous_turn(layer=layer, items=built)
            created = Item.objects.bulk_create([built[i] for i in fresh])
            _follow_previous_turns(items=created, previous=previous)
            held = _holders(built=built, plan=plan)
            if created:
                ids = [item.pk for item in created]
                audit.record(
                    workspace_id=layer.workspace_id,
                    target_kind=AuditTarget.ITEM,
                    action="create",
                    target_id=ids[0] if len(ids) == 1 else f"{ids[0]}..{ids[-1]} ({len(ids)})",
                    target_label=layer.name,
                    new={"layer": layer.pk, "items": len(ids), "merged": len(built) - len(ids)},
                )
            for data, holder in zip(items, held, strict=True):
                if data.supersedes:
                    items_supersede(new=holder, old_ids=data.supersedes)
            _note_changes(layer=layer, count=len(created))
            content_changed(layer.workspace_id)  # bulk_create sends no signals
            from apps.layers.tasks import embed_pending_items

            background.enqueue(embed_pending_items, None)  # the sweep of all workspaces: fair, see embedder.py
            events.status_changed(layer.workspace_id)
            if any(item.kind == ItemKind.MESSAGE for item in created):
                messages_created.send(sender=Item, layer_id=layer.pk)  # after the embedding sweep is queued
    except IntegrityError as exc:  # a concurrent writer took an external_id between check and insert
        raise Conflict("an item with this external_id already exists", code=DUPLICATE_EXTERNAL_ID) from exc
    return ItemsWritten(items=held, merged=tuple(sorted({*plan.into_existing, *plan.into_batch})))


def _holders(*, built: Sequence[Item], plan: MergePlan) -> list[Item]:
    """Per built item, the item that holds it once the batch is saved; merges applied (repeats of
    the batch fold into its first occurrence, the rest into the stored items they repeat)."""
    repeats: dict[int, list[Item]] = {}
    for index, kept in plan.into_existing.items():
        repeats.setdefault(kept.pk, []).append(built[index])
    holder = list(built)
    for index, first in plan.into_batch.items():
        holder[index] = built[first]
    kept_by_id = {kept.pk: kept for kept in plan.into_existing.values()}
    for index, kept in plan.into_existing.items():
        holder[index] = kept_by_id[kept.pk]
    for first in set(plan.into_batch.values()):
        merge_into(kept=built[first], repeats=[built[i] for i, f in plan.into_batch.items() if f == first])
    for kept_id, merged in repeats.items():
        merge_into(kept=kept_by_id[kept_id], repeats=merged)
    return holder


def _turns(items: Sequence[Item]) -> list[Item]:
    """The messages of `items`, in the order they were said (then as given)."""
    order = sorted(range(len(items)), key=lambda i: (items[i].created_at, i))
    return [items[i] for i in order if items[i].kind == ItemKind.MESSAGE]


def _previous_turn(*, layer: Layer, items: Sequence[Item]) -> int | None:
    """The layer's newest message said at or before the first message of `items`, when that one
    names no parent: the turn it follows (None when there is none, or nothing to link)."""
    turns = _turns(items)
    if not turns or turns[0].parent_id is not None:
        return None
    return (
        Item.objects.filter(layer=layer, kind=ItemKind.MESSAGE, created_at__lte=turns[0].created_at)
        .order_by("-created_at", "-id")
        .values_list("id", flat=True)
        .first()
    )


def _follow_previous_turns(*, items: Sequence[Item], previous: int | None) -> None:
    """A message written without a parent answers the session's previous turn (the graph
    tracks the conversation's flow), so a session is one thread unless a message names the parent
    it branches from. In one UPDATE, after the insert gave the batch its ids."""
    linked = []
    for item in _turns(items):
        if item.parent_id is None and previous is not None:
            item.parent_id = previous
            linked.append(item)
        previous = item.pk
    if linked:
        Item.objects.bulk_update(linked, ["parent"])


def _auto_importance(item: Item) -> None:
    """Let the higher apps adjust a new or re-texted item before it is saved (e.g. decision importance)."""
    item_prepared.send(sender=Item, item=item)


def _note_changes(*, layer: Layer, count: int) -> None:
    """Count changes toward the layer's change-based summary trigger (summaries keeps the count and,
    past the threshold, summarizes after commit)."""
    changes_counted.send(sender=Layer, layer_id=layer.pk, count=count)


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
        return {"__all__": InvalidInput(f"cannot change {', '.join(sorted(unknown))}", code=INVALID_FIELDS)}
    data = _updated_input(item=item, changes=changes)
    errors = item_errors(data)
    if data.external_id and data.external_id != item.external_id:
        if Item.objects.filter(layer_id=item.layer_id, external_id=data.external_id).exclude(pk=item.pk).exists():
            errors["external_id"] = Conflict(
                f"an item with external_id {data.external_id!r} exists", code=DUPLICATE_EXTERNAL_ID
            )
    return errors


def item_update(*, item: Item, changes: dict[str, Any]) -> Item:
    """Apply a partial update; a content or title change clears the embedding for re-embedding.

    The new text's tokens are counted before the transaction (with the pooled connection given
    back for a long text), so no transaction or connection is held while they are counted."""
    errors = item_update_errors(item=item, changes=changes)
    if errors:
        raise next(iter(errors.values()))
    data = _updated_input(item=item, changes=changes)
    layer = item.layer
    if len(data.content) + len(data.title) > ITEMS_COUNT_OFF_CONNECTION_CHARS:
        connection_release()
    rebuilt = _build_item(layer=layer, data=data, now=item.created_at)
    before = audit.fields_of(item, list(changes))
    with transaction.atomic():
        text_changed = rebuilt.content_hash != item.content_hash
        for name in set(ITEM_EDITABLE_FIELDS) | {"token_count", "content_hash"}:
            setattr(item, name, getattr(rebuilt, name))
        if text_changed:
            item.embedding = None
            item.embedding_model = ""
            _auto_importance(item)  # an edit that now states a decision raises it too
        item.save()
        audit.record(
            workspace_id=item.workspace_id,
            target_kind=AuditTarget.ITEM,
            action="update",
            target_id=item.pk,
            target_label=layer.name,
            old=before,
            new=audit.fields_of(item, list(changes)),
        )
        if text_changed:
            _note_changes(layer=layer, count=1)
            from apps.layers.tasks import embed_pending_items

            background.enqueue(embed_pending_items, None)
    return item


def item_delete(*, item: Item) -> None:
    with transaction.atomic():
        layer = item.layer
        audit.record(
            workspace_id=item.workspace_id,
            target_kind=AuditTarget.ITEM,
            action="delete",
            target_id=item.pk,
            target_label=layer.name,
            old=audit.fields_of(item, ["kind", "type", "title", "content", "external_id"]),
        )
        item.delete()
        _note_changes(layer=layer, count=1)  # after: a layer left empty clears its summaries


def item_helpfulness_add(*, item: Item, step: float) -> float:
    """Move the item's helpfulness by `step`, bounded to [0, 1], in one UPDATE with an F expression (so
    concurrent steps are never lost); the workspace's cached contexts see the new ranking. Returns the
    helpfulness now stored."""
    bounded = Least(Greatest(F("helpfulness") + Value(step), Value(0.0)), Value(1.0), output_field=FloatField())
    Item.objects.filter(pk=item.pk).update(helpfulness=bounded)
    content_changed(item.workspace_id)
    return float(Item.objects.filter(pk=item.pk).values_list("helpfulness", flat=True).get())


def item_importance_lower(*, item: Item, step: float) -> Item:
    """Lower the item's importance by `step`, never below 0: an audited `item_update` like any edit."""
    lowered = max(round(item.importance - step, 6), 0.0)
    return item_update(item=item, changes={"importance": lowered})


def messages_relink(*, layer: Layer, links: Sequence[tuple[int, int | None, float]]) -> int:
    """Set the parent and importance of messages of `layer` as (id, parent id, importance), in one
    UPDATE, for an import that creates the messages first and links them after (parents are the new
    ids) and keeps the importance it was given instead of the one derived at creation. Only messages
    of the layer change, and only to parents among them. Returns how many changed."""
    if not links:
        return 0
    ids, parents, importances = (list(column) for column in zip(*links, strict=True))
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE layers_item AS i SET parent_id = v.parent, importance = v.importance "
            "FROM unnest(%s::bigint[], %s::bigint[], %s::float8[]) AS v(id, parent, importance) "
            "WHERE i.id = v.id AND i.layer_id = %s AND i.kind = 'message' AND (v.parent IS NULL OR EXISTS "
            "(SELECT 1 FROM layers_item p WHERE p.id = v.parent AND p.layer_id = %s AND p.kind = 'message'))",
            [ids, parents, importances, layer.pk, layer.pk],
        )
        changed = cur.rowcount
    content_changed(layer.workspace_id)
    return changed
