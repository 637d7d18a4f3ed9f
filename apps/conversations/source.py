"""Communities as a context candidate source (settings.CONTEXT_SOURCES).

A community stands in for its members that are beyond the summary distance of the conversation
window: its candidate carries their ids in `metadata["stands_in_for"]`, and the assembly service
drops those members' window candidates (apps/assembly/sources.py `apply_stand_ins`). Members
that are pinned or important (decisions, user-marked) keep their own place. Three small queries,
only when the request has a conversation window; no embedding, no model.
"""

from __future__ import annotations

import re
from collections import defaultdict

from django.db.models import Q

from apps.assembly.engine import Candidate, Rung
from apps.assembly.sources import SourceRequest
from apps.conversations.importance import DECISION_IMPORTANCE
from apps.conversations.models import Community, CommunityMember
from apps.layers.models import Item, ItemKind

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
BASE_RELEVANCE = 0.3  # what a stand-in is worth before any word of the query matches it


def _overlap(query: str, text: str) -> float:
    """Share of the query's words found in the text (0 when the query has none)."""
    wanted = {w.lower() for w in _WORD.findall(query)}
    if not wanted:
        return 0.0
    return len(wanted & {w.lower() for w in _WORD.findall(text)}) / len(wanted)


class CommunitySource:
    name = "community summaries"

    def candidates(self, request: SourceRequest) -> list[Candidate]:
        window = tuple(getattr(request, "window_layer_ids", ()) or ())
        if not window:
            return []
        summary_distance = int(getattr(request, "summary_distance", 20))
        cutoff = list(
            Item.objects.filter(workspace_id=request.workspace_id, layer_id__in=window, kind=ItemKind.MESSAGE)
            .order_by("-created_at", "-id")
            .values_list("created_at", "id")[summary_distance + 1 : summary_distance + 2]
        )
        if not cutoff:  # the whole conversation is within the summary distance
            return []
        cut_at, cut_id = cutoff[0]
        far = (
            CommunityMember.objects.filter(
                community__workspace_id=request.workspace_id,
                community__layer_id__in=window,
                item__pinned=False,
                item__importance__lt=DECISION_IMPORTANCE,
            )
            .filter(Q(item__created_at__lt=cut_at) | Q(item__created_at=cut_at, item_id__lte=cut_id))
            .values_list("community_id", "item_id")
        )
        stands_in: dict[int, list[int]] = defaultdict(list)
        for community_id, item_id in far:
            stands_in[community_id].append(item_id)
        if not stands_in:
            return []
        communities = Community.objects.filter(pk__in=list(stands_in)).order_by("first_at", "id")
        out = []
        for c in communities:
            relevance = BASE_RELEVANCE + (1 - BASE_RELEVANCE) * _overlap(request.query, f"{c.title} {c.summary}")
            out.append(
                Candidate(
                    id=c.pk,
                    source="community",
                    kind="community",
                    type=c.kind,
                    layer_id=c.layer_id,
                    layer_name=request.layer_name if c.layer_id == request.layer_id else "conversation",
                    content=c.summary,
                    title=c.title,
                    created_at=c.last_at,
                    rungs=(Rung("full", c.summary), Rung("title", c.title)),
                    importance=0.7,
                    metadata={
                        "community": c.key,
                        "stands_in_for": sorted(stands_in[c.pk]),
                        "inherited_relevance": relevance,
                    },
                )
            )
        return out
