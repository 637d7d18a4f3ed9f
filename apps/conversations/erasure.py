"""Erasure of communities (apps/core/erasure.py): recomputed from the messages left, or cleared.

After the erased messages are gone, the communities of every touched layer (and, for a text match,
of every layer with a community whose title or summary holds the text) are computed again from the
messages that remain; one that still holds the text is deleted, as is an LLM summary of a message
that holds it (a deleted message's summary goes with it).
"""

from __future__ import annotations

from django.db.models import Q

from apps.conversations.communities import communities_refresh
from apps.conversations.models import Community, MessageSummary
from apps.core.erasure import DERIVED, ErasureRun, eraser


def communities_erase(run: ErasureRun) -> None:
    text = run.target.text
    rows = Community.objects.filter(workspace_id=run.workspace_id)
    named = Q(layer_id__in=list(run.touched_layers))
    if text:
        named |= Q(title__icontains=text) | Q(summary__icontains=text)
    layer_ids = set(rows.filter(named).values_list("layer_id", flat=True))
    run.count("communities", found=rows.filter(layer_id__in=layer_ids).count())
    if run.dry_run:
        return
    for layer_id in sorted(layer_ids):
        before = rows.filter(layer_id=layer_id).count()
        made = communities_refresh(layer_id=layer_id, force=True) or []
        run.count("communities", removed=before, regenerated=len(made))
    if text:
        cleared, _ = rows.filter(Q(title__icontains=text) | Q(summary__icontains=text)).delete()
        run.count("communities", cleared=cleared)
        written = MessageSummary.objects.filter(item__workspace_id=run.workspace_id)
        gone, _ = written.filter(Q(title__icontains=text) | Q(summary__icontains=text)).delete()
        if gone:  # written again from the message's text as it is now
            run.count("message_summaries", cleared=gone)


def register() -> None:
    eraser(DERIVED, "conversations.communities", communities_erase)
