"""Erasure of summaries (apps/core/erasure.py): rebuilt without what was erased, or cleared.

Every summary of a touched layer (one whose items were erased, and its ancestors, whose roll-ups
carried them) is deleted and generated again, deepest layer first so that each parent rolls up its
children's new summaries, by the extractive provider (local and certain to answer: an erasure never
waits on an LLM; the next change of the layer summarizes with the configured provider again). A
layer left with no content keeps none; one whose run fails keeps none either (cleared). A text match
also rebuilds the layers whose summaries hold the text, and clears any that still do. The summaries
personalized for an erased `user` (a member of that name) are deleted. The summary cache follows every
row change (signals.py).
"""

from __future__ import annotations

import logging

from django.db import transaction

from apps.core.erasure import DERIVED, ErasureRun, eraser
from apps.layers.selectors import layer_find, layer_tree
from apps.summaries.models import Summary
from apps.summaries.selectors import member_id

log = logging.getLogger(__name__)


def _depth(tree: dict[int, tuple[int | None, str, str]], layer_id: int) -> int:
    depth, parent = 0, tree.get(layer_id, (None, "", ""))[0]
    while parent is not None:
        depth, parent = depth + 1, tree.get(parent, (None, "", ""))[0]
    return depth


def summaries_erase(run: ErasureRun) -> None:
    text = run.target.text
    rows = Summary.objects.filter(workspace_id=run.workspace_id)
    layer_ids = set(run.touched_layers)
    if text:
        layer_ids |= set(rows.filter(text__icontains=text).values_list("layer_id", flat=True))
    personal = None
    if run.target.user and (user_id := member_id(workspace_id=run.workspace_id, username=run.target.user)):
        personal = rows.filter(personalized_for_id=user_id).exclude(layer_id__in=layer_ids)
    found = rows.filter(layer_id__in=layer_ids).count() + (personal.count() if personal is not None else 0)
    run.count("summaries", found=found)
    if run.dry_run:
        return
    if personal is not None:
        removed, _ = personal.delete()
        run.count("summaries", removed=removed)
    tree = layer_tree(workspace_id=run.workspace_id)
    for layer_id in sorted(layer_ids, key=lambda i: -_depth(tree, i)):
        _rebuild(run, layer_id)
    if text:  # a summary that still holds the text (a provider copied it from elsewhere): cleared
        cleared, _ = rows.filter(text__icontains=text).delete()
        run.count("summaries", cleared=cleared)


def _rebuild(run: ErasureRun, layer_id: int) -> None:
    from apps.summaries.services import layer_summarize

    layer = layer_find(layer_id=layer_id)
    if layer is None or layer.workspace_id != run.workspace_id:
        return
    with transaction.atomic():
        removed, _ = Summary.objects.filter(layer_id=layer_id).delete()
    run.count("summaries", removed=removed)
    try:
        layer_summarize(layer=layer, force=True, trigger="erasure", extractive=True, retries=False)
    except Exception:  # noqa: BLE001 - the erased text is gone already; the layer keeps no summary
        log.warning("layer %s: summaries not regenerated after an erasure; left cleared", layer_id, exc_info=True)
        Summary.objects.filter(layer_id=layer_id).delete()
    made = Summary.objects.filter(layer_id=layer_id).count()
    run.count("summaries", regenerated=made, cleared=removed if not made else 0)


def register() -> None:
    eraser(DERIVED, "summaries", summaries_erase)
