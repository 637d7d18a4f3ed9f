"""State dumps (workspace and layer) and replaying a recorded request, below the pages."""

from __future__ import annotations

import json

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.test import override_settings

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core import background
from apps.core.models import PeriodicRun
from apps.layers.models import Item
from apps.layers.services import ItemInput, item_delete, items_create, layer_create
from apps.summaries.services import layer_summarize
from apps.web.console.replay import record_replay
from apps.web.console.state import layer_state, workspace_state
from tests.support.tenants import Tenant


@pytest.fixture
def project(tenant: Tenant) -> object:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=layer,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            ItemInput(kind="memory", type="decision", content="Failed card payments are retried three times."),
            ItemInput(kind="document", content="The billing cron job runs at 02:00 UTC and emails a report."),
        ],
    )
    return layer


def assemble(tenant: Tenant, layer: object, query: str, budget: int = 400) -> AssemblyRecord:
    result = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=layer.pk, query=query, token_budget=budget, timeout_ms=0),  # type: ignore[attr-defined]
    )
    return AssemblyRecord.objects.get(trace_id=result.trace_id)


def test_the_workspace_dump_has_counts_backlog_providers_caches_schedule_and_layers(
    tenant: Tenant, project: object
) -> None:
    PeriodicRun.objects.create(task="apps.layers.tasks.embed_pending_items", runs=4, last_ok=True)
    dump = workspace_state(workspace=tenant.workspace)
    assert dump["status"]["items"] == 3
    assert dump["status"]["items_pending_embedding"] == Item.objects.filter(embedding__isnull=True).count()
    assert "queue_depth" in dump["status"]["background"]
    assert dump["provider_health"]["consecutive_llm_failures"] == 0
    schedule = {entry["name"]: entry for entry in dump["schedule"]}
    assert schedule["embed-pending-items"]["runs"] == 4 and schedule["embed-pending-items"]["last_ok"] is True
    assert schedule["expire-error-patterns"]["runs"] == 0
    layers = {row["name"]: row for row in dump["layers"]}
    assert layers["Billing"]["items"] == 3
    assert layers["Billing"]["changes_since_summary"] == 3
    assert layers["Billing"]["summary_source_hashes"] == []  # never summarized
    json.dumps(dump, cls=DjangoJSONEncoder)  # the download is this dict as JSON


def test_the_layer_dump_has_config_trigger_counters_summaries_with_hashes_and_cache_status(
    tenant: Tenant, project: object
) -> None:
    layer_summarize(layer=project, force=True, extractive=True)  # type: ignore[arg-type]
    dump = layer_state(layer=project)  # type: ignore[arg-type]
    assert dump["config"]["update_on_changes"] >= 1
    assert dump["trigger"]["changes_since_summary"] == 0  # reset by the run
    assert dump["trigger"]["last_summarized_at"] is not None
    depths = {row["depth"]: row for row in dump["summaries"]}
    assert set(depths) == {"sentence", "paragraph", "detailed"}
    assert all(len(row["source_hash"]) == 64 and row["provider"] == "extractive" for row in depths.values())
    assert dump["cache"]["summary_entry_cached"] is True  # written through on save
    assert dump["items"]["by_kind"] == {"memory": 2, "document": 1}
    # What the layer depends on: the queue, the provider's health, the caches and the periodic schedule.
    assert dump["background"]["queue_depth"] >= 0 and dump["background"]["mode"]
    assert dump["provider_health"]["consecutive_llm_failures"] == 0
    assert {"assembly_cache_seconds", "content_version", "summary_cache_seconds"} <= set(dump["cache"])
    assert {"embed-pending-items", "summarize-due-layers"} <= {entry["name"] for entry in dump["schedule"]}
    hashes = workspace_state(workspace=tenant.workspace)["layers"]
    assert next(row for row in hashes if row["name"] == "Billing")["summary_source_hashes"] == [
        depths["detailed"]["source_hash"]
    ]
    json.dumps(dump, cls=DjangoJSONEncoder)


@override_settings(ASSEMBLY_CACHE_SECONDS=0)
def test_a_replay_with_nothing_changed_gives_the_same_context(tenant: Tenant, project: object) -> None:
    record = assemble(tenant, project, "when does the billing cron job run?")
    diff = record_replay(record=record)
    assert diff.compared and diff.unchanged
    assert diff.trace_id != str(record.trace_id)
    assert diff.kept == record.items_included


@override_settings(ASSEMBLY_CACHE_SECONDS=0)
def test_a_replay_shows_the_chunks_added_and_removed_and_the_token_difference(tenant: Tenant, project: object) -> None:
    record = assemble(tenant, project, "when does the billing cron job run?", budget=2000)
    gone = Item.objects.get(content__startswith="The billing cron job runs")
    gone_id = gone.pk
    item_delete(item=gone)
    items_create(
        layer=project,  # type: ignore[arg-type]
        items=[ItemInput(kind="memory", type="fact", content="The billing cron job moved to 03:00 UTC in May.")],
    )
    background.wait_idle(60)
    diff = record_replay(record=record)
    assert [row.id for row in diff.removed] == [gone_id]
    assert [row.excerpt for row in diff.added] == ["The billing cron job moved to 03:00 UTC in May."]
    assert diff.token_difference == diff.tokens_after - record.tokens_used
    assert not diff.unchanged


def test_a_cache_hit_replays_the_request_it_came_from(tenant: Tenant, project: object) -> None:
    original = assemble(tenant, project, "when does the billing cron job run?")
    assemble(tenant, project, "when does the billing cron job run?")
    hit = AssemblyRecord.objects.filter(request__has_key="cached_from").get()
    diff = record_replay(record=hit)
    assert diff.original_trace_id == str(original.trace_id)
    assert diff.unchanged


def test_the_schedules_errors_are_left_out_of_a_workspaces_dump_but_given_to_superusers(
    tenant: Tenant, other_tenant: Tenant, project: object, django_user_model: type
) -> None:
    """The schedule is installation-wide: a sweep's error may quote another workspace's rows."""
    from django.test import Client

    from apps.workspaces.models import Membership, Role

    leak = "IntegrityError: Key (external_id)=(globex-payroll-2026) already exists."
    PeriodicRun.objects.create(
        task="apps.layers.tasks.embed_pending_items", runs=4, failures=1, last_ok=False, last_error=leak
    )
    member = django_user_model.objects.create_user(username="grace", password="x" * 12, is_staff=True)
    Membership.objects.create(workspace=tenant.workspace, user=member, role=Role.ADMIN)
    client = Client()
    client.force_login(member)
    for url in (
        "/console/state/",
        "/console/state/?format=json",
        f"/console/state/{project.pk}/",  # type: ignore[attr-defined]
        f"/console/state/{project.pk}/?format=json",
    ):  # type: ignore[attr-defined]
        response = client.get(url)
        assert response.status_code == 200, url
        assert "globex-payroll" not in response.content.decode(), url
    schedule = {
        entry["name"]: entry for entry in json.loads(client.get("/console/state/?format=json").content)["schedule"]
    }
    assert schedule["embed-pending-items"]["last_ok"] is False and "last_error" not in schedule["embed-pending-items"]
    assert "superusers" in client.get("/console/state/").content.decode()

    root = django_user_model.objects.create_superuser(username="root", password="x" * 12, email="r@example.com")
    client.force_login(root)
    assert "globex-payroll" in client.get("/console/state/").content.decode()
    dump = workspace_state(workspace=tenant.workspace, installation=True)
    assert {entry["name"]: entry for entry in dump["schedule"]}["embed-pending-items"]["last_error"] == leak
