"""The group ranks packages (same-group match), it does not filter them. An agent
of one group gets its group's packages first; another group's packages follow when there is
room, and the "+N more available" count includes those left out."""

from __future__ import annotations

import pytest
from pytest_django.fixtures import SettingsWrapper

from tests.packages.agent import package, package_ids
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

TOPIC = "Findings on the retry storm in the billing worker"


def topic(i: int) -> str:
    """The same topic in words of its own (identical texts of one group are merged as duplicates)."""
    return f"{TOPIC}, note {i}."


@pytest.fixture
def session(tenant: Tenant) -> int:
    return layer(tenant, "session", tenant.root.pk, external_id="sess-1")


def test_another_groups_packages_follow_the_agents_own(tenant: Tenant, session: int) -> None:
    theirs = bulk(tenant, session, [package(topic(i), priority="medium", group_id="g2") for i in range(2)])
    ours = bulk(tenant, session, [package(topic(9), priority="medium", group_id="g1")])
    got = package_ids(ask(tenant, layer=session, query="retry storm", kinds=["package"], group_id="g1"))
    assert got[0] == ours[0] and sorted(got[1:]) == sorted(theirs)


def test_the_overflow_count_includes_another_groups_packages(
    tenant: Tenant, session: int, settings: SettingsWrapper
) -> None:
    settings.AGENT_TYPE_PACKAGE_LIMITS = {"developer": 2}
    ours = bulk(tenant, session, [package(topic(i), priority="medium", group_id="g1") for i in range(2)])
    bulk(tenant, session, [package(topic(i), priority="critical", group_id="g2") for i in range(3)])
    body = ask(tenant, layer=session, query="retry storm", kinds=["package"], group_id="g1", agent_type="developer")
    assert sorted(package_ids(body)) == sorted(ours)  # same group outranks another group's higher priority
    assert body["overflow"] == {"count": 3, "message": "+3 more available"}


def test_a_group_without_packages_hears_so_and_gets_the_others(tenant: Tenant, session: int) -> None:
    theirs = bulk(tenant, session, [package(topic(i), group_id="other-group") for i in range(2)])
    body = ask(tenant, layer=session, query="retry storm", kinds=["package"], group_id="g1")
    assert sorted(package_ids(body)) == sorted(theirs)
    assert "No context packages found for group g1" in body["warnings"]
