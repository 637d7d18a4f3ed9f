"""An emptied layer's summaries go, and the roll-up follows (issue 26, finding 7): the deleted text
leaves the layer's summaries and its parent's, so a sibling session no longer reads it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from apps.summaries.models import Summary
from tests.summaries.helpers import TEAM_FACTS
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)  # the roll-up runs after commit, in the background

SECRET = "The vault door code is 4711 and opens the server room."


def _layer(t: Tenant, kind: str, parent: int, name: str) -> int:
    response = t.client.post("/api/v1/layers/", {"kind": kind, "name": name, "parent": parent}, format="json")
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def _summarize(t: Tenant, layer: int) -> dict:  # type: ignore[type-arg]
    response = t.client.post(f"/api/v1/layers/{layer}/summarize/", format="json")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


def _context(t: Tenant, layer: int) -> str:
    body = {"layer": layer, "query": "vault door code", "token_budget": 3000, "timeout_ms": 0}
    response = t.client.post("/api/v1/context/", body, format="json")
    assert response.status_code == 200, response.content
    return str(response.json()["context"])


def test_deleting_a_sessions_items_clears_its_summaries_and_its_parents_roll_up(
    tenant: Tenant, wait_background: Callable[[], None]
) -> None:
    project = _layer(tenant, "project", tenant.root.pk, "Retry queue")
    emptied = _layer(tenant, "session", project, "Session 1")
    sibling = _layer(tenant, "session", project, "Session 2")
    items = [{"kind": "memory", "type": "fact", "content": SECRET}]
    items += [{"kind": "memory", "type": "fact", "content": fact} for fact in TEAM_FACTS[:2]]
    created = tenant.client.post("/api/v1/items/bulk/", {"layer": emptied, "items": items}, format="json")
    assert created.status_code == 201, created.content
    wait_background()
    _summarize(tenant, emptied)
    _summarize(tenant, project)
    assert "4711" in _context(tenant, sibling)  # the roll-up reaches the sibling: the precondition

    for item_id in created.json()["ids"]:
        assert tenant.client.delete(f"/api/v1/items/{item_id}/").status_code == 204
    # In the background: the emptied layer clears its summaries, then its parent summarizes again.
    wait_until(lambda: wait_background() or not Summary.objects.filter(layer_id=emptied).exists(), what="clear")
    wait_until(
        lambda: wait_background() or all("4711" not in s.text for s in Summary.objects.filter(layer_id=project)),
        what="the parent's roll-up",
    )
    assert tenant.client.get(f"/api/v1/layers/{emptied}/summaries/").json()["summaries"] == []
    assert all("4711" not in s.text for s in Summary.objects.filter(layer_id=project))
    assert "4711" not in _context(tenant, sibling)
    again = _summarize(tenant, emptied)
    assert (again["status"], again["reason"], again["summaries"]) == ("skipped", "no_content", [])
