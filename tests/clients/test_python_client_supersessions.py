"""The Python client's supersessions against a live server: a proposal listed, accepted once, then refused."""

from __future__ import annotations

import asyncio

import pytest

from contextarch_client import AsyncContextArchitect, Conflict, ContextArchitect, Supersession
from tests.clients.live_data import Live
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server


def test_a_proposed_supersession_is_listed_accepted_once_and_then_refused(live: Live) -> None:
    with ContextArchitect(live.base, live.a.secret) as ca:
        layer = ca.create_layer(kind="project", name="People", parent=live.a.root.pk)
        old = ca.create_item(layer=layer.id, kind="memory", type="fact", content="Alice lives in Paris.")
        ca.wait_until_searchable(timeout=120, interval=0.2)
        new = ca.create_item(layer=layer.id, kind="memory", type="fact", content="Alice moved to Berlin.")
        ca.wait_until_searchable(timeout=120, interval=0.2)
        # The embedder proposes right after its write-back: a moment after the backlog reads empty.
        pending = wait_until(lambda: ca.list_supersessions(layer=layer.id, state="pending").results, what="a proposal")
        (proposal,) = pending
        accepted = ca.accept_supersession(proposal.id)
        with pytest.raises(Conflict) as twice:
            ca.reject_supersession(proposal.id)
        listed = list(ca.iter_supersessions(layer=layer.id))

    async def read_async() -> list[Supersession]:
        async with AsyncContextArchitect(live.base, live.a.secret) as aca:
            return [p async for p in aca.iter_supersessions(layer=layer.id, state="accepted")]

    assert isinstance(proposal, Supersession)
    assert (proposal.old.id, proposal.new.id, proposal.detector, proposal.state) == (old.id, new.id, "rules", "pending")
    assert proposal.similarity >= 0.88 and proposal.reason
    assert accepted.state == "accepted" and accepted.old.superseded_by == new.id
    assert accepted.decided_by.startswith("key ")
    assert twice.value.code == "proposal_decided" and twice.value.status == 409
    assert [(p.id, p.state) for p in listed] == [(proposal.id, "accepted")]
    assert [p.id for p in asyncio.run(read_async())] == [proposal.id]
