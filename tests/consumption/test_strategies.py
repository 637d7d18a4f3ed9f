"""Strategies: successful approaches stored as package items of type `strategy`, whose
helpfulness agents' feedback raises or lowers (bounded to 0..1) and which ranks them."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from pytest_django.fixtures import SettingsWrapper

from apps.layers.models import Item
from tests.packages.agent import package_ids
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db

APPROACH = "Approach that fixed the flaky retry test: freeze the clock and drain the queue first."


def strategy(content: str = APPROACH, **fields: Any) -> dict[str, Any]:
    return {"kind": "package", "type": "strategy", "content": content, **fields}


def feedback(t: Tenant, strategy_id: int, helpful: Any) -> Any:
    return t.client.post(f"/api/v1/strategies/{strategy_id}/feedback/", {"helpful": helpful}, format="json")


@pytest.fixture
def session(tenant: Tenant) -> int:
    return layer(tenant, "session", tenant.root.pk, external_id="sess-1")


def order(t: Tenant, session: int) -> list[int]:
    return package_ids(ask(t, layer=session, query="flaky retry test", kinds=["package"], agent_type="developer"))


def test_feedback_moves_helpfulness_by_one_step_within_bounds(
    tenant: Tenant, session: int, settings: SettingsWrapper
) -> None:
    settings.STRATEGY_FEEDBACK_STEP = 0.1
    (sid,) = bulk(tenant, session, [strategy()])
    up = feedback(tenant, sid, True)
    assert up.status_code == 200 and up.json()["helpfulness"] == pytest.approx(0.6)
    assert feedback(tenant, sid, False).json()["helpfulness"] == pytest.approx(0.5)
    for _ in range(7):
        last = feedback(tenant, sid, True)
    assert last.json()["helpfulness"] == 1.0
    for _ in range(12):
        last = feedback(tenant, sid, False)
    assert last.json()["helpfulness"] == 0.0
    assert Item.objects.get(pk=sid).helpfulness == 0.0


def test_helpful_feedback_lifts_a_strategy_above_its_equal(tenant: Tenant, session: int) -> None:
    first, second = bulk(tenant, session, [strategy(), strategy(on_duplicate="keep")])  # two equal ones, kept apart
    before = order(tenant, session)
    assert set(before) == {first, second}
    behind = before[1]
    for _ in range(2):
        feedback(tenant, behind, True)
    after = ask(tenant, layer=session, query="flaky retry test", kinds=["package"], agent_type="developer")
    assert after["cached"] is False  # the feedback changed the ranking: the cached answer is gone
    assert package_ids(after)[0] == behind
    for _ in range(4):
        feedback(tenant, behind, False)
    assert order(tenant, session)[0] != behind


def test_helpfulness_outweighs_one_place_in_the_search_results(tenant: Tenant, session: int) -> None:
    bulk(
        tenant,
        session,
        [strategy(), strategy("Another approach to a flaky retry test: retry the retry test three times.")],
    )
    strong, weak = order(tenant, session)
    parts = tenant.client.post(
        "/api/v1/context/preview/", {"layer": session, "query": "flaky retry test", "kinds": ["package"]}, format="json"
    ).json()["trace"]
    relevance = {e["id"]: e["parts"]["relevance"] for e in parts}
    assert relevance[strong] > relevance[weak]  # the search itself prefers `strong`
    for _ in range(3):
        feedback(tenant, strong, False)
        feedback(tenant, weak, True)
    assert order(tenant, session) == [weak, strong]


def test_the_strategies_list_is_most_helpful_first(tenant: Tenant, session: int) -> None:
    a, b, c = bulk(
        tenant,
        session,
        [
            strategy(group_id="g1"),
            strategy(group_id="g2", agent_types=["qa"]),
            strategy(group_id="g1", on_duplicate="keep"),
        ],
    )
    bulk(tenant, session, [{"kind": "package", "type": "research", "content": APPROACH}])  # not a strategy
    feedback(tenant, c, True)
    feedback(tenant, a, False)
    listed = tenant.client.get("/api/v1/strategies/").json()
    assert [s["id"] for s in listed["results"]] == [c, b, a]
    assert listed["results"][0]["helpfulness"] == pytest.approx(0.6)
    in_g1 = tenant.client.get("/api/v1/strategies/", {"group_id": "g1"}).json()["results"]
    assert [s["id"] for s in in_g1] == [c, a]
    for_qa = tenant.client.get("/api/v1/strategies/", {"agent_type": "developer"}).json()["results"]
    assert [s["id"] for s in for_qa] == [c, a]  # b is for qa only


def test_feedback_on_anything_but_a_strategy_of_the_workspace_is_404(
    tenant: Tenant, other_tenant: Tenant, session: int
) -> None:
    sid, research = bulk(tenant, session, [strategy(), {"kind": "package", "type": "research", "content": "x"}])
    for target, client in ((research, tenant), (sid, other_tenant), (999_999, tenant)):
        response = feedback(client, target, True)
        assert response.status_code == 404 and response.json()["error"]["code"] == "strategy_not_found"
    assert Item.objects.get(pk=sid).helpfulness == 0.5
    assert other_tenant.client.get("/api/v1/strategies/").json()["results"] == []


@pytest.mark.parametrize("payload", [{}, {"helpful": "maybe"}, {"helpful": None}])
def test_feedback_needs_a_yes_or_no(tenant: Tenant, session: int, payload: dict[str, Any]) -> None:
    (sid,) = bulk(tenant, session, [strategy()])
    response = tenant.client.post(f"/api/v1/strategies/{sid}/feedback/", payload, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_helpful"


@pytest.mark.django_db(transaction=True)
def test_concurrent_feedback_never_loses_a_step(settings: SettingsWrapper) -> None:
    settings.STRATEGY_FEEDBACK_STEP = 0.05
    tenant = make_tenant("concurrent")
    (sid,) = bulk(tenant, tenant.root.pk, [strategy()])
    Item.objects.filter(pk=sid).update(helpfulness=0.0)
    errors: list[BaseException] = []

    def give() -> None:
        try:
            from rest_framework.test import APIClient

            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {tenant.secret}")
            for _ in range(3):
                response = client.post(f"/api/v1/strategies/{sid}/feedback/", {"helpful": True}, format="json")
                assert response.status_code == 200
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=give) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert Item.objects.get(pk=sid).helpfulness == pytest.approx(0.9)


def test_a_strategy_can_be_stored_with_a_starting_helpfulness(
    tenant: Tenant, other_tenant: Tenant, session: int
) -> None:
    body = {"layer": session, "content": APPROACH, "group_id": "g1", "source_refs": ["task/77"], "helpfulness": 0.9}
    created = tenant.client.post("/api/v1/strategies/", body, format="json")
    assert created.status_code == 201, created.json()
    stored = Item.objects.get(pk=created.json()["id"])
    assert (stored.kind, stored.type, stored.helpfulness) == ("package", "strategy", 0.9)
    assert stored.source_refs == ["task/77"]
    (plain,) = bulk(tenant, session, [strategy()])
    assert order(tenant, session) == [stored.pk, plain]
    elsewhere = other_tenant.client.post("/api/v1/strategies/", body, format="json")
    assert elsewhere.status_code == 404 and elsewhere.json()["error"]["code"] == "layer_not_found"
    for bad, code in (({"helpfulness": 1.5}, "invalid_helpfulness"), ({"content": ""}, "invalid_content")):
        response = tenant.client.post("/api/v1/strategies/", {**body, **bad}, format="json")
        assert response.status_code == 400 and response.json()["error"]["code"] == code
