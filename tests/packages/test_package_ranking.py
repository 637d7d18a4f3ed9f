"""From an agent's side: packages carry priority, group, agent types and source
references, and are ranked by priority level, same-group match, agent-type relevance and recency."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.layers.embedder import items_embed_pending
from tests.packages.agent import package, package_ids
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

TOPIC = "Findings on the cache invalidation bug in the billing worker."


def equal(**fields: Any) -> dict[str, Any]:
    """A package of the same text as the others, so only `fields` rank it: kept apart, as a writer
    asks for a deliberate repeat (an exact repeat is merged into the stored item otherwise)."""
    return package(TOPIC, on_duplicate="keep", **fields)


@pytest.fixture
def session(tenant: Tenant) -> int:
    return layer(tenant, "session", tenant.root.pk, external_id="sess-1")


def ranked(t: Tenant, session: int, **body: Any) -> list[int]:
    """Package ids in context order, for a request that has room for all of them."""
    return package_ids(ask(t, layer=session, query="cache invalidation bug", kinds=["package"], **body))


def test_it_keeps_a_packages_priority_group_agent_types_and_source_refs(tenant: Tenant, session: int) -> None:
    fields = {
        "priority": "critical",
        "group_id": "group-7",
        "agent_types": ["developer", "qa"],
        "source_refs": ["research/cache.md", "https://example.com/issue/42"],
    }
    (item_id,) = bulk(tenant, session, [package(TOPIC, **fields)])
    stored = tenant.client.get(f"/api/v1/items/{item_id}/").json()
    assert {key: stored[key] for key in fields} == fields
    bad = tenant.client.post("/api/v1/items/", {"layer": session, **package(TOPIC, priority="urgent")}, format="json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_priority"


@pytest.mark.parametrize("order", [("low", "medium", "high", "critical"), ("critical", "high", "medium", "low")])
def test_it_ranks_equally_relevant_packages_by_priority(tenant: Tenant, session: int, order: tuple[str, ...]) -> None:
    ids = bulk(tenant, session, [equal(priority=p) for p in order])
    by_priority = dict(zip(order, ids, strict=True))
    got = ranked(tenant, session)[:3]
    assert got == [by_priority["critical"], by_priority["high"], by_priority["medium"]]


@pytest.mark.parametrize("first_is_ours", [True, False])
def test_it_ranks_the_agents_own_group_first(tenant: Tenant, session: int, first_is_ours: bool) -> None:
    groups = ["g1", ""] if first_is_ours else ["", "g1"]
    ids = bulk(tenant, session, [equal(priority="medium", group_id=g) for g in groups])
    ours = ids[groups.index("g1")]
    assert ranked(tenant, session, group_id="g1")[0] == ours


@pytest.mark.parametrize("first_is_ours", [True, False])
def test_it_ranks_packages_meant_for_the_agent_type_first(tenant: Tenant, session: int, first_is_ours: bool) -> None:
    audiences = [["developer"], ["qa"]] if first_is_ours else [["qa"], ["developer"]]
    ids = bulk(tenant, session, [equal(priority="medium", agent_types=a) for a in audiences])
    ours = ids[audiences.index(["developer"])]
    untargeted = bulk(tenant, session, [equal(priority="medium")])[0]
    # Meant for the developer, then meant for anyone, then meant for someone else.
    assert ranked(tenant, session, agent_type="developer") == [ours, untargeted, ids[1 - ids.index(ours)]]


def test_it_ranks_newer_packages_first_when_all_else_is_equal(tenant: Tenant, session: int) -> None:
    now = timezone.now()
    ages = [40, 2, 15]
    ids = bulk(
        tenant,
        session,
        [equal(priority="high", created_at=(now - timedelta(days=d)).isoformat()) for d in ages],
    )
    assert ranked(tenant, session) == [ids[1], ids[2], ids[0]]


def test_with_hybrid_search_the_developer_gets_its_critical_group_package_first(tenant: Tenant, session: int) -> None:
    """With embeddings: five research packages for a task, three come."""
    ids = bulk(
        tenant,
        session,
        [
            package(
                "Rate limiter design: token bucket per merchant, refill every second, burst of 20.",
                priority="critical",
                group_id="payments-rl",
                agent_types=["developer"],
            ),
            package("Investigation: the payments API returned 429s under the nightly batch load.", priority="high"),
            package("Benchmarks of Redis-backed rate limiting at 5k requests per second.", priority="medium"),
            package(
                "Notes on the payments API gateway timeouts and retries.", priority="medium", group_id="payments-rl"
            ),
            package(
                "QA checklist for rate limiting: boundaries, bursts, clock skew.", priority="low", agent_types=["qa"]
            ),
        ],
    )
    assert items_embed_pending(workspace_id=tenant.workspace.pk) == 5
    body = ask(
        tenant,
        layer=session,
        query="How should we rate limit the payments API?",
        group_id="payments-rl",
        agent_type="developer",
    )
    got = package_ids(body)
    assert len(got) == 3 and got[0] == ids[0] and ids[4] not in got
    assert body["overflow"] == {"count": 2, "message": "+2 more available"}
    assert not any("keyword search only" in w for w in body["warnings"])  # the vector search took part
