"""Per-agent-type retrieval limits, the "+N more
available" overflow indicator, and "No context packages found"."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import SettingsWrapper

from tests.packages.agent import package, package_ids
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant) -> int:
    return layer(tenant, "session", tenant.root.pk, external_id="sess-1")


@pytest.fixture
def limits(settings: SettingsWrapper) -> None:
    settings.DEFAULT_PACKAGE_LIMIT = 3
    settings.AGENT_TYPE_PACKAGE_LIMITS = {"developer": 3, "qa": 5}


NOTES = "Notes on the retry storm."


def packages(t: Tenant, session: int, count: int, **fields: object) -> list[int]:
    return bulk(t, session, [package(f"Package {i} on the retry storm.", **fields) for i in range(count)])


def test_a_developer_gets_the_top_three_of_five_packages_and_hears_of_two_more(
    tenant: Tenant, session: int, limits: None
) -> None:
    ids = bulk(
        tenant,
        session,
        # One text five times, kept apart (a repeat is merged otherwise): only the fields rank them.
        [package(NOTES, priority=p, group_id="g1", on_duplicate="keep") for p in ("low", "medium", "critical")]
        + [package(NOTES, priority=p, on_duplicate="keep") for p in ("high", "low")],
    )
    body = ask(tenant, layer=session, query="retry storm", group_id="g1", agent_type="developer")
    assert package_ids(body) == [ids[2], ids[3], ids[1]]  # critical, high, medium-in-the-group
    assert body["overflow"] == {"count": 2, "message": "+2 more available"}
    assert "No context packages found" not in body["warnings"]


@pytest.mark.parametrize(("agent_type", "expected"), [("developer", 3), ("qa", 5), ("architect", 3)])
def test_each_agent_type_gets_its_configured_number_of_packages(
    tenant: Tenant, session: int, limits: None, agent_type: str, expected: int
) -> None:
    packages(tenant, session, 10, priority="high")
    body = ask(tenant, layer=session, query="retry storm", agent_type=agent_type)
    assert len(package_ids(body)) == expected
    assert body["overflow"] == {"count": 10 - expected, "message": f"+{10 - expected} more available"}
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()
    assert trace["overflow_count"] == 10 - expected


def test_a_profiles_retrieval_limit_wins_over_the_agent_type_default(
    tenant: Tenant, session: int, limits: None
) -> None:
    packages(tenant, session, 10)
    created = tenant.client.post(
        "/api/v1/profiles/", {"name": "deep-qa", "agent_type": "qa", "retrieval_limit": 7}, format="json"
    )
    assert created.status_code == 201, created.json()
    body = ask(tenant, layer=session, query="retry storm", profile="deep-qa")
    assert len(package_ids(body)) == 7 and body["overflow"]["message"] == "+3 more available"


def test_no_overflow_indicator_when_every_package_fits(tenant: Tenant, session: int, limits: None) -> None:
    packages(tenant, session, 2)
    body = ask(tenant, layer=session, query="retry storm", agent_type="developer")
    assert len(package_ids(body)) == 2 and body["overflow"] == {"count": 0, "message": ""}


def test_an_empty_workspace_gets_an_empty_block_that_says_so(tenant: Tenant, session: int) -> None:
    body = ask(tenant, layer=session, query="retry storm", group_id="g1", agent_type="developer", kinds=["package"])
    assert body["chunks"] == [] and body["context"] == "" and body["total_tokens"] == 0
    assert "No context packages found" in body["warnings"]
    assert body["overflow"] == {"count": 0, "message": ""}


def test_other_content_still_comes_when_there_are_no_packages(tenant: Tenant, session: int) -> None:
    bulk(tenant, session, [{"kind": "memory", "type": "fact", "content": "The retry storm began at 09:10."}])
    body = ask(tenant, layer=session, query="retry storm", agent_type="developer")
    assert [c["kind"] for c in body["chunks"]] == ["memory"]
    assert "No context packages found" in body["warnings"]


def test_packages_of_another_workspace_are_never_offered(tenant: Tenant, other_tenant: Tenant, session: int) -> None:
    theirs = layer(other_tenant, "session", other_tenant.root.pk, external_id="sess-1")
    packages(other_tenant, theirs, 3)
    body = ask(tenant, layer=session, query="retry storm", agent_type="developer")
    assert package_ids(body) == [] and "No context packages found" in body["warnings"]
