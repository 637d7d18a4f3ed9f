"""Retention: a workspace keeps its assembly records for records_retention_days; the hourly sweep
deletes older ones only once the rollups hold them, so the dashboard's figures stay."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.assembly.rollup.services import rollup_catch_up
from apps.assembly.services import records_flush
from apps.assembly.services.retention import records_expire
from apps.web.selectors.dashboard import dashboard_figures
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db


def assemble(tenant: Tenant, n: int) -> list[AssemblyRecord]:
    for i in range(n):
        body = {"layer": tenant.root.pk, "query": f"question {i} about backups", "token_budget": 300}
        assert tenant.client.post("/api/v1/context/", body, format="json").status_code == 200
    records_flush()
    return list(AssemblyRecord.objects.filter(workspace=tenant.workspace).order_by("id"))


def age(record: AssemblyRecord, days: float) -> None:
    AssemblyRecord.objects.filter(pk=record.pk).update(created_at=timezone.now() - timedelta(days=days))


def figures(tenant: Tenant) -> tuple[object, ...]:
    shown = dashboard_figures(workspace=tenant.workspace, range_key="30d")
    return (shown.totals, shown.assemblies, shown.p50_ms, shown.zones, shown.models)


def test_the_sweep_deletes_records_past_retention_and_the_dashboard_keeps_its_figures(tenant: Tenant) -> None:
    old, older, recent = assemble(tenant, 3)
    age(old, 10)
    age(older, 12)
    age(recent, 2)
    admin = admin_client(tenant)
    assert admin.patch("/api/v1/workspace/", {"records_retention_days": 5}, format="json").status_code == 200

    assert records_expire() == 0  # nothing is rolled up yet: nothing may go
    rollup_catch_up()
    before = figures(tenant)
    assert sum(before[1]) == 3  # type: ignore[arg-type]

    assert records_expire() == 2
    assert list(AssemblyRecord.objects.values_list("pk", flat=True)) == [recent.pk]
    assert figures(tenant) == before
    assert records_expire() == 0


def test_a_record_the_rollup_has_not_read_stays_whatever_its_age(tenant: Tenant) -> None:
    (first,) = assemble(tenant, 1)
    age(first, 40)
    rollup_catch_up()
    (_, late) = assemble(tenant, 1)  # after the watermark
    age(late, 40)
    assert records_expire() == 1
    assert list(AssemblyRecord.objects.values_list("pk", flat=True)) == [late.pk]


def test_retention_zero_keeps_records_forever_and_other_workspaces_keep_their_own(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    (mine,) = assemble(tenant, 1)
    (theirs,) = assemble(other_tenant, 1)
    age(mine, 400)
    age(theirs, 400)
    assert (
        admin_client(tenant).patch("/api/v1/workspace/", {"records_retention_days": 0}, format="json").status_code
        == 200
    )
    rollup_catch_up()
    assert records_expire() == 1  # the other workspace's default of 30 days
    assert list(AssemblyRecord.objects.values_list("pk", flat=True)) == [mine.pk]


def test_the_workspace_settings_need_an_admin_key_and_valid_values(tenant: Tenant) -> None:
    assert tenant.client.get("/api/v1/workspace/").status_code == 403
    admin = admin_client(tenant)
    shown = admin.get("/api/v1/workspace/").json()
    assert shown == {
        "slug": "acme",
        "name": tenant.workspace.name,
        "records_retention_days": 30,
        "messages_retention_days": None,
        "layer_kind_ttl_days": {},
    }
    for bad in (-1, 3651, "soon", None):
        response = admin.patch("/api/v1/workspace/", {"records_retention_days": bad}, format="json")
        assert response.status_code == 400, bad
        assert response.json()["error"]["code"].startswith("invalid"), response.json()
    response = admin.patch("/api/v1/workspace/", {"slug": "other"}, format="json")
    assert response.status_code == 400
    assert admin.get("/api/v1/workspace/").json()["records_retention_days"] == 30
