"""Supersession proposals as the pages list them: both items' excerpts, the layer, how close, why, by whom."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.core.paginator import Page, Paginator

from apps.layers import selectors as layers
from apps.layers.models import Item, SupersessionProposal
from apps.layers.selectors import EXCERPT_CHARS
from apps.workspaces.models import Workspace

PAGE_SIZE = 50


@dataclass(frozen=True)
class ProposalRow:
    """A supersession proposal: the older item, the newer one that would replace it, and why."""

    id: int
    layer_id: int
    layer_name: str
    old_id: int
    old_excerpt: str
    new_id: int
    new_excerpt: str
    similarity: float
    reason: str
    detector: str
    state: str
    created_at: datetime
    decided_by: str


def excerpt(item: Item) -> str:
    text = f"{item.title}: {item.content}" if item.title else item.content
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def proposal_row(proposal: SupersessionProposal) -> ProposalRow:
    """One row (the proposal read with its items and layer: `layers.selectors.proposals_list`)."""
    return ProposalRow(
        id=proposal.pk,
        layer_id=proposal.layer_id,
        layer_name=proposal.layer.name,
        old_id=proposal.old_id,
        old_excerpt=excerpt(proposal.old),
        new_id=proposal.new_id,
        new_excerpt=excerpt(proposal.new),
        similarity=proposal.similarity,
        reason=proposal.reason,
        detector=proposal.detector,
        state=proposal.state,
        created_at=proposal.created_at,
        decided_by=proposal.decided_by,
    )


@dataclass(frozen=True)
class ProposalsPage:
    rows: list[ProposalRow]
    page: Page[SupersessionProposal]


def proposals_page(*, workspace: Workspace, state: str, number: str | int) -> ProposalsPage:
    """One page of the workspace's proposals in `state` (empty: every state), newest first (two queries)."""
    found = layers.proposals_list(workspace=workspace, state=state or None)
    page = Paginator(found, PAGE_SIZE).get_page(number)
    return ProposalsPage(rows=[proposal_row(p) for p in page.object_list], page=page)
