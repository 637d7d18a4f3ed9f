"""Consumption end to end: assemblies record the packages they injected per session, group,
agent type and iteration; agents report the ones they used; /stats/ gives consumed / injected."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pytest_django.fixtures import SettingsWrapper

from apps.assembly.models import AssemblyRecord
from tests.packages.agent import package, package_ids
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant, settings: SettingsWrapper) -> int:
    settings.AGENT_TYPE_PACKAGE_LIMITS = {"developer": 3, "qa": 5}
    settings.DEFAULT_PACKAGE_LIMIT = 3
    sid = layer(tenant, "session", tenant.root.pk, external_id="sess-1")
    bulk(tenant, sid, [package(f"Package {i} on the retry storm.", priority="high") for i in range(6)])
    return sid


def report(t: Tenant, trace_id: str, used: list[int]) -> Any:
    return t.client.post("/api/v1/consumption/", {"trace_id": trace_id, "used": used}, format="json")


def spawn(t: Tenant, session: int, agent_type: str, iteration: int, **extra: Any) -> dict[str, Any]:
    return ask(
        t, layer=session, query="retry storm", group_id="g1", agent_type=agent_type, iteration=iteration, **extra
    )


def test_each_assembly_records_its_packages_with_session_group_agent_type_and_iteration(
    tenant: Tenant, session: int
) -> None:
    body = spawn(tenant, session, "developer", 2)
    record = AssemblyRecord.objects.get(trace_id=body["trace_id"])
    assert (record.session, record.group_id, record.agent_type, record.iteration) == ("sess-1", "g1", "developer", 2)
    assert record.injected_packages == package_ids(body) and len(record.injected_packages) == 3
    assert record.used_packages is None
    trace = tenant.client.get(f"/api/v1/traces/{body['trace_id']}/").json()
    assert trace["consumption"] == {
        "session": "sess-1",
        "group_id": "g1",
        "agent_type": "developer",
        "iteration": 2,
        "injected_packages": package_ids(body),
        "used_packages": None,
        "reported_at": None,
    }


def test_the_consumed_ratio_per_workspace_and_per_agent_type(tenant: Tenant, session: int) -> None:
    dev1 = spawn(tenant, session, "developer", 1)
    dev2 = spawn(tenant, session, "developer", 2)
    dev3 = spawn(tenant, session, "developer", 3)  # never reported
    qa1 = spawn(tenant, session, "qa", 1)
    assert [len(package_ids(b)) for b in (dev1, dev2, dev3, qa1)] == [3, 3, 3, 5]
    again = spawn(tenant, session, "developer", 1)  # the same injection, answered from the cache
    assert again["cached"] is True and again["trace_id"] == dev1["trace_id"]

    first = report(tenant, dev1["trace_id"], package_ids(dev1)[:2])
    assert first.status_code == 200, first.json()
    assert first.json()["ratio"] == pytest.approx(0.6667) and first.json()["duplicate"] is False
    assert report(tenant, dev2["trace_id"], package_ids(dev2)[:1]).status_code == 200
    assert report(tenant, qa1["trace_id"], package_ids(qa1)[:4]).status_code == 200

    stats = tenant.client.get("/api/v1/stats/").json()["consumption"]
    assert {k: stats[k] for k in ("assemblies", "reported", "injected", "used", "injected_unreported")} == {
        "assemblies": 4,
        "reported": 3,
        "injected": 11,
        "used": 7,
        "injected_unreported": 3,
    }
    assert stats["ratio"] == pytest.approx(7 / 11, abs=1e-4) and stats["meets_target"] is True
    assert stats["target_ratio"] == 0.5
    by_type = {row["agent_type"]: row for row in stats["by_agent_type"]}
    assert set(by_type) == {"developer", "qa"}
    developer = by_type["developer"]
    assert (developer["injected"], developer["used"], developer["ratio"]) == (6, 3, 0.5)
    assert by_type["developer"]["meets_target"] is False  # the target is more than half consumed
    assert by_type["developer"]["assemblies"] == 3 and by_type["developer"]["injected_unreported"] == 3
    assert (by_type["qa"]["injected"], by_type["qa"]["used"], by_type["qa"]["ratio"]) == (5, 4, 0.8)

    only_qa = tenant.client.get("/api/v1/stats/", {"agent_type": "qa"}).json()["consumption"]
    assert (only_qa["injected"], only_qa["used"], only_qa["ratio"]) == (5, 4, 0.8)
    assert [row["agent_type"] for row in only_qa["by_agent_type"]] == ["qa"]


def test_stats_are_per_workspace(tenant: Tenant, other_tenant: Tenant, session: int) -> None:
    body = spawn(tenant, session, "developer", 1)
    report(tenant, body["trace_id"], package_ids(body))
    theirs = other_tenant.client.get("/api/v1/stats/").json()["consumption"]
    assert (theirs["assemblies"], theirs["injected"], theirs["ratio"], theirs["by_agent_type"]) == (0, 0, None, [])
    assert tenant.client.get("/api/v1/stats/").json()["consumption"]["ratio"] == 1.0


def test_a_profiles_agent_type_is_the_one_recorded(tenant: Tenant, session: int) -> None:
    tenant.client.post("/api/v1/profiles/", {"name": "tester", "agent_type": "qa"}, format="json")
    body = ask(tenant, layer=session, query="retry storm", profile="tester")
    assert AssemblyRecord.objects.get(trace_id=body["trace_id"]).agent_type == "qa"
    cached = ask(tenant, layer=session, query="retry storm", profile="tester")
    assert cached["cached"] is True
    hit = AssemblyRecord.objects.filter(request__cached_from=body["trace_id"]).get()
    assert (hit.agent_type, hit.injected_packages) == ("qa", package_ids(body))


def test_an_assembly_without_packages_is_not_counted(tenant: Tenant, session: int) -> None:
    body = ask(tenant, layer=session, query="nothing matches zebra", agent_type="developer")
    assert package_ids(body) == []
    ok = report(tenant, body["trace_id"], [])
    assert ok.status_code == 200 and ok.json()["ratio"] is None
    assert tenant.client.get("/api/v1/stats/").json()["consumption"]["assemblies"] == 0


class TestValidation:
    def test_an_unknown_trace_is_404(self, tenant: Tenant, session: int) -> None:
        response = report(tenant, str(uuid.uuid4()), [])
        assert response.status_code == 404 and response.json()["error"]["code"] == "trace_not_found"

    def test_another_workspaces_trace_is_404(self, tenant: Tenant, other_tenant: Tenant, session: int) -> None:
        body = spawn(tenant, session, "developer", 1)
        response = report(other_tenant, body["trace_id"], [])
        assert response.status_code == 404 and response.json()["error"]["code"] == "trace_not_found"
        assert AssemblyRecord.objects.get(trace_id=body["trace_id"]).used_packages is None

    def test_ids_that_were_not_injected_are_rejected(self, tenant: Tenant, session: int) -> None:
        body = spawn(tenant, session, "developer", 1)
        left_out = AssemblyRecord.objects.get(trace_id=body["trace_id"]).injected_packages[0] + 1000
        response = report(tenant, body["trace_id"], [package_ids(body)[0], left_out])
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == "used_not_injected" and error["details"]["not_injected"] == [left_out]
        assert error["details"]["injected"] == package_ids(body)
        assert AssemblyRecord.objects.get(trace_id=body["trace_id"]).used_packages is None

    def test_a_package_left_out_by_the_limit_was_not_injected(self, tenant: Tenant, session: int) -> None:
        body = spawn(tenant, session, "developer", 1)
        trace = tenant.client.post(
            "/api/v1/context/preview/",
            {"layer": session, "query": "retry storm", "group_id": "g1", "agent_type": "developer", "iteration": 1},
            format="json",
        ).json()["trace"]
        over_limit = [e["id"] for e in trace if e["reason"] == "over_limit"]
        assert over_limit
        response = report(tenant, body["trace_id"], over_limit[:1])
        assert response.status_code == 400 and response.json()["error"]["code"] == "used_not_injected"

    @pytest.mark.parametrize(
        ("payload", "code"),
        [
            ({"trace_id": "not-a-uuid", "used": []}, "invalid_trace_id"),
            ({"used": []}, "invalid_trace_id"),
            ({"trace_id": "00000000-0000-0000-0000-000000000000"}, "invalid_used"),
            ({"trace_id": "00000000-0000-0000-0000-000000000000", "used": "1,2"}, "invalid_used"),
            ({"trace_id": "00000000-0000-0000-0000-000000000000", "used": [0]}, "invalid_used"),
            ({"trace_id": "00000000-0000-0000-0000-000000000000", "used": ["x"]}, "invalid_used"),
        ],
    )
    def test_bad_input_is_400_with_a_code(self, tenant: Tenant, payload: dict[str, Any], code: str) -> None:
        response = tenant.client.post("/api/v1/consumption/", payload, format="json")
        assert response.status_code == 400 and response.json()["error"]["code"] == code

    def test_it_needs_an_api_key(self, anon: Any) -> None:
        response = anon.post("/api/v1/consumption/", {"trace_id": str(uuid.uuid4()), "used": []}, format="json")
        assert response.status_code == 401
        assert anon.get("/api/v1/stats/").status_code == 401

    def test_repeating_a_report_is_idempotent_and_changing_it_is_a_conflict(self, tenant: Tenant, session: int) -> None:
        body = spawn(tenant, session, "developer", 1)
        ids = package_ids(body)
        first = report(tenant, body["trace_id"], [ids[0], ids[1]])
        again = report(tenant, body["trace_id"], [ids[1], ids[0], ids[1]])  # same set, other order, a repeat
        assert again.status_code == 200 and again.json()["duplicate"] is True
        assert again.json()["used"] == first.json()["used"] == [ids[0], ids[1]]
        assert again.json()["reported_at"] == first.json()["reported_at"]
        changed = report(tenant, body["trace_id"], [ids[2]])
        assert changed.status_code == 409
        assert changed.json()["error"]["code"] == "consumption_already_reported"
        assert changed.json()["error"]["details"]["used"] == [ids[0], ids[1]]
        stats = tenant.client.get("/api/v1/stats/").json()["consumption"]
        assert (stats["injected"], stats["used"]) == (3, 2)

    def test_a_cached_answers_trace_takes_the_report(self, tenant: Tenant, session: int) -> None:
        spawn(tenant, session, "developer", 1)
        cached = spawn(tenant, session, "developer", 1)
        assert cached["cached"] is True
        response = report(tenant, cached["trace_id"], package_ids(cached)[:1])
        assert response.status_code == 200 and response.json()["injected"] == package_ids(cached)
