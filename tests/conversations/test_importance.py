"""Importance: automatic for decisions, marked by users, and kept in assembled context."""

from __future__ import annotations

import pytest

from apps.conversations.importance import is_decision
from apps.layers.models import Item
from tests.conversations.sessions import make_session, message
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "text",
    [
        "Decision: we use Postgres for the queue.",
        "OK, we decided to ship on Friday.",
        "Let's go with option B.",
        "That's settled, we'll use Redis.",
    ],
)
def test_it_recognises_decisions(text: str) -> None:
    assert is_decision(text)


@pytest.mark.parametrize("text", ["What should we decide about the queue?", "The decision tree model is slow."])
def test_it_does_not_take_questions_for_decisions(text: str) -> None:
    assert not is_decision(text)


def test_a_decision_message_is_important_when_written(tenant: Tenant, session: int) -> None:
    decision = message(tenant, session, "Decision: we use Postgres for the job queue.", role="assistant")
    plain = message(tenant, session, "How big is the job queue today?")
    rows = {i.pk: i for i in Item.objects.filter(pk__in=[decision, plain])}
    assert rows[decision].importance == 0.9 and rows[decision].metadata["importance_source"] == "decision"
    assert rows[plain].importance == 0.5 and "importance_source" not in rows[plain].metadata


def test_a_user_marks_a_message_important_and_takes_it_back(tenant: Tenant, session: int) -> None:
    plain = message(tenant, session, "Remember that the staging database is shared.")
    marked = tenant.client.post(f"/api/v1/items/{plain}/importance/", {"important": True}, format="json").json()
    assert marked == {"id": plain, "importance": 1.0, "importance_source": "user"}
    assert Item.objects.get(pk=plain).importance == 1.0
    back = tenant.client.post(f"/api/v1/items/{plain}/importance/", {"important": False}, format="json").json()
    assert back["importance"] == 0.5 and back["importance_source"] is None


def test_marking_is_validated_and_scoped(tenant: Tenant, other_tenant: Tenant, session: int) -> None:
    plain = message(tenant, session, "Some message.")
    bad = tenant.client.post(f"/api/v1/items/{plain}/importance/", {"important": "maybe"}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_important"
    memory = tenant.client.post(
        "/api/v1/items/", {"layer": session, "kind": "memory", "type": "fact", "content": "A fact."}, format="json"
    ).json()["id"]
    not_message = tenant.client.post(f"/api/v1/items/{memory}/importance/", {"important": True}, format="json")
    assert not_message.status_code == 400 and not_message.json()["error"]["code"] == "invalid_kind"
    foreign = other_tenant.client.post(f"/api/v1/items/{plain}/importance/", {"important": True}, format="json")
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "item_not_found"


def test_an_important_message_is_not_replaced_by_its_community(tenant: Tenant) -> None:
    from apps.conversations.communities import communities_refresh
    from tests.conversations.sessions import messages

    session = make_session(tenant)
    ids = messages(tenant, session, [f"Note {i} about the billing task." for i in range(30)], task_ids=["BILL-1"])
    tenant.client.post(f"/api/v1/items/{ids[0]}/importance/", {"important": True}, format="json")
    communities_refresh(layer_id=session)
    body = tenant.client.post(
        "/api/v1/context/", {"layer": session, "query": "deployment", "token_budget": 8000}, format="json"
    ).json()
    items = {c["id"] for c in body["chunks"] if c["source"] == "item"}
    assert any(c["source"] == "community" for c in body["chunks"])
    assert ids[0] in items and ids[1] not in items  # the marked one keeps its place; its neighbour is stood in for


def test_an_edit_that_states_a_decision_raises_importance(tenant: Tenant, session: int) -> None:
    plain = message(tenant, session, "Which database should we use?")
    body = tenant.client.patch(f"/api/v1/items/{plain}/", {"content": "We decided to use Postgres."}, format="json")
    assert body.status_code == 200 and body.json()["importance"] == 0.9
    assert body.json()["metadata"]["importance_source"] == "decision"
