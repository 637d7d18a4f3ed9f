"""Erasure of items (apps/core/erasure.py): which items a target names, and deleting them.

Deleting an item deletes its embedding (a column of its row), its keyword copy (a trigger), its
relationships both ways and, by cascade, the rows other apps keep of it (access counts, community
memberships); claims on it by the embedder go too. A layer named for deletion (the proxy's session
of an erased user) goes with everything in it.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast

from apps.core.erasure import LAST, SOURCE, ErasureRun, eraser, finder, scrub
from apps.layers.models import EmbeddingClaim, Item, Layer, Relationship
from apps.layers.selectors import layer_tree
from apps.layers.services import layer_delete


def _named(run: ErasureRun) -> Q:
    t = run.target
    named = Q(pk__in=[])
    if t.item_ids:
        named |= Q(pk__in=list(t.item_ids))
    if t.external_id_prefix:
        named |= Q(external_id__startswith=t.external_id_prefix)
    if t.user:
        named |= Q(metadata__user=t.user)
    if t.text:
        named |= (
            Q(title__icontains=t.text)
            | Q(content__icontains=t.text)
            | Q(external_id__icontains=t.text)
            | Q(metadata_text__icontains=t.text)
            | Q(source_refs_text__icontains=t.text)
        )
    return named


def items_find(run: ErasureRun) -> None:
    """The items the target names; their layers and those layers' ancestors are touched."""
    rows = (
        Item.objects.filter(workspace_id=run.workspace_id)
        .annotate(
            metadata_text=Cast("metadata", output_field=TextField()),
            source_refs_text=Cast("source_refs", output_field=TextField()),
        )
        .filter(_named(run))
        .values_list("pk", "layer_id")
    )
    for item_id, layer_id in rows:
        run.item_ids.add(item_id)
        run.touched_layers.add(layer_id)


def touched_with_ancestors(run: ErasureRun) -> None:
    """Add every touched or deleted layer's ancestors (their summaries roll up what it held)."""
    tree = layer_tree(workspace_id=run.workspace_id)
    for layer_id in list(run.touched_layers | run.layer_ids):
        parent = tree.get(layer_id, (None, "", ""))[0]
        while parent is not None:
            run.touched_layers.add(parent)
            parent = tree.get(parent, (None, "", ""))[0]
    deleted = _subtree(tree, run.layer_ids)
    run.touched_layers -= deleted
    # Records keep a session's external id (their `session`): an identifier, replaced wherever it stands.
    run.needles |= {
        external_id
        for external_id in Layer.objects.filter(pk__in=list(deleted)).values_list("external_id", flat=True)
        if external_id and len(external_id) >= 3
    }


def _subtree(tree: dict[int, tuple[int | None, str, str]], roots: set[int]) -> set[int]:
    out = set(roots)
    changed = True
    while changed:
        more = {i for i, (parent, _, _) in tree.items() if parent in out and i not in out}
        out |= more
        changed = bool(more)
    return out


_LOCK_ITEMS_SQL = "SELECT id FROM layers_item WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE"


def items_erase(run: ErasureRun) -> None:
    """Delete the items and layers (dry run: count them, their relationships and embeddings)."""
    tree = layer_tree(workspace_id=run.workspace_id)
    deleted_layers = _subtree(tree, run.layer_ids) if run.layer_ids else set()
    items = Item.objects.filter(workspace_id=run.workspace_id).filter(
        Q(pk__in=list(run.item_ids)) | Q(layer_id__in=list(deleted_layers))
    )
    ids = list(items.values_list("pk", flat=True))
    run.item_ids |= set(ids)  # a deleted layer's items too: the records that show them are rewritten
    edges = Relationship.objects.filter(Q(source_id__in=ids) | Q(target_id__in=ids)).count()
    embedded = Item.objects.filter(pk__in=ids, embedding__isnull=False).count()
    layers = Layer.objects.filter(workspace_id=run.workspace_id, pk__in=list(deleted_layers))
    run.count("items", found=len(ids), removed=0 if run.dry_run else len(ids))
    run.count("relationships", found=edges, removed=0 if run.dry_run else edges)
    run.count("embeddings", found=embedded, removed=0 if run.dry_run else embedded)
    run.count("layers", found=len(deleted_layers), removed=0 if run.dry_run else len(deleted_layers))
    text = run.target.text
    renamed = (
        list(Layer.objects.filter(workspace_id=run.workspace_id, name__icontains=text).exclude(pk__in=deleted_layers))
        if text
        else []
    )
    run.count("layer_names", found=len(renamed), rewritten=0 if run.dry_run else len(renamed))
    if run.dry_run:
        return
    with transaction.atomic():
        with connection.cursor() as cur:
            cur.execute(_LOCK_ITEMS_SQL, [ids])
        Item.objects.filter(pk__in=ids).delete()
        EmbeddingClaim.objects.filter(item_id__in=ids).delete()
        for layer in renamed:
            layer.name = scrub(layer.name, text)
            layer.save(update_fields=["name", "updated_at"])
    for layer in layers.filter(parent_id__isnull=False).exclude(parent_id__in=list(deleted_layers)):
        layer_delete(layer=layer)


def register() -> None:
    finder("layers.items", items_find)
    finder("layers.ancestors", touched_with_ancestors, order=LAST)  # after every finder that adds layers
    eraser(SOURCE, "layers.items", items_erase)
