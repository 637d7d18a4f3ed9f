"""Communities as a context candidate source (settings.CONTEXT_SOURCES).

A community stands in for its members that are beyond the summary distance of the conversation
window: its candidate carries their ids in `stands_in_for`, and the packer leaves out those
members' window candidates ranked after it once it is in the context (engine/pack.py). Members
that are pinned or important (decisions, user-marked) keep their own place. Three small queries,
only when the request has a conversation window. With a query vector, a community embedded by the
configured model (conversations/vectors.py) has its similarity to the query, so rank places it like
an item and the floor may leave it out (engine/floor.py); otherwise its relevance is the share of
the query's words it holds. No model runs here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest
from apps.conversations.importance import DECISION_IMPORTANCE
from apps.conversations.models import Community, CommunityMember
from apps.core import embeddings
from apps.core.stored_vectors import similarity
from apps.engine import Candidate
from apps.engine.candidates import community_candidate
from apps.layers.models import Item, ItemKind

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)
BASE_RELEVANCE = 0.3  # what a stand-in is worth before any word of the query matches it
STAND_IN_SPAN = 200  # covers every preset's title distance beyond its summary distance


def _overlap(query: str, text: str) -> float:
    """Share of the query's words found in the text (0 when the query has none)."""
    wanted = {w.lower() for w in _WORD.findall(query)}
    if not wanted:
        return 0.0
    return len(wanted & {w.lower() for w in _WORD.findall(text)}) / len(wanted)


@dataclass(frozen=True)
class CommunityQuery:
    """What the communities are looked up and ranked by."""

    workspace_id: int
    layer_id: int
    layer_name: str
    query: str
    window_layer_ids: tuple[int, ...] = ()  # the conversation window's layers
    summary_distance: int = 20  # window messages beyond it may be stood in for by a community
    query_vector: np.ndarray | None = None  # the query's vector, when there is one (ranks by similarity)

    @classmethod
    def of(cls, request: GatherRequest, gathered: Gathered) -> CommunityQuery:
        r = request.resolved
        return cls(
            workspace_id=request.workspace.pk,
            layer_id=r.layer.pk,
            layer_name=r.layer.name,
            query=request.params.query,
            window_layer_ids=request.window_layers,
            summary_distance=r.resolution.summary_distance,
            query_vector=gathered.searched.query_vector,
        )


class CommunitySource(CandidateSource):
    name = "community summaries"

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        return Found(candidates=tuple(community_candidates(CommunityQuery.of(request, gathered))))


def community_candidates(request: CommunityQuery) -> list[Candidate]:
    """The window's communities with members beyond the summary distance, each standing in for them."""
    window = request.window_layer_ids
    if not window:
        return []
    summary_distance = request.summary_distance
    # The window's turns just beyond the summary distance: the only far members that are
    # candidates at all (older ones are hidden by distance), so the only ones to stand in for.
    beyond = list(
        Item.objects.filter(workspace_id=request.workspace_id, layer_id__in=window, kind=ItemKind.MESSAGE)
        .order_by("-created_at", "-id")
        .values_list("created_at", "id", "pinned", "importance")[
            summary_distance + 1 : summary_distance + 1 + STAND_IN_SPAN
        ]
    )
    if not beyond:  # the whole conversation is within the summary distance
        return []
    # A community has a member beyond the summary distance iff its earliest member is that old.
    communities = list(
        Community.objects.filter(
            workspace_id=request.workspace_id, layer_id__in=window, first_at__lte=beyond[0][0]
        ).order_by("first_at", "id")
    )
    if not communities:
        return []
    replaceable = [
        item_id for _, item_id, pinned, importance in beyond if not pinned and importance < DECISION_IMPORTANCE
    ]
    stands_in: dict[int, list[int]] = defaultdict(list)
    pairs = CommunityMember.objects.filter(
        community_id__in=[c.pk for c in communities], item_id__in=replaceable
    ).values_list("community_id", "item_id")
    for community_id, item_id in pairs:
        stands_in[community_id].append(item_id)
    out = []
    vector = request.query_vector
    model = embeddings.model_label() if vector is not None else ""
    for c in communities:
        sim = similarity(vector, c.embedding) if vector is not None and c.embedding_model == model else None
        relevance = (
            BASE_RELEVANCE + (1 - BASE_RELEVANCE) * _overlap(request.query, f"{c.title} {c.summary}")
            if sim is None
            else 0.0  # ranked by its similarity instead (engine/rank.py)
        )
        out.append(
            community_candidate(
                c,
                layer_name=request.layer_name if c.layer_id == request.layer_id else "conversation",
                importance=0.7,
                metadata={"community": c.key},
                stands_in_for=tuple(sorted(stands_in[c.pk])),
                inherited_relevance=relevance,
                vector_similarity=sim,
            )
        )
    return out
