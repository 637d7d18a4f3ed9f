"""Page runs apart from agent traffic (issue 19 item 7): the preview, the profiles' compare and the
console's replay are recorded with the origin "page", shown so in the console (and filtered by it),
and left out of the dashboard's agent figures and of a session's trajectory unless asked for."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client
from django.utils import timezone

from apps.assembly.models import AssemblyRecord, RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.rollup.services import rollup_catch_up
from apps.assembly.services import context_assemble, records_flush
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.web.selectors.dashboard import dashboard_figures
from apps.web.selectors.trajectory import session_trajectory
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="session", name="Chat", parent=tenant.root, external_id="c1")
    items_create(
        layer=layer,
        items=[ItemInput(kind="message", role="user", content=f"Turn {n} is about invoices.") for n in range(6)],
    )
    return layer


@pytest.fixture
def developer(client: Client, tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    user = django_user_model.objects.create_user(username="grace", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.DEVELOPER)
    client.force_login(user)
    return client


def agent_request(tenant: Tenant, layer: Layer, query: str) -> str:
    return context_assemble(
        workspace=tenant.workspace, params=ContextParams(layer_id=layer.pk, query=query, timeout_ms=0)
    ).trace_id


def page_runs(developer: Client, layer: Layer) -> None:
    """A preview, its stream, and a replay of the agent's trace, as a person on the pages."""
    query = urlencode({"layer": layer.pk, "query": "invoices", "token_budget": 300, "timeout_ms": 0})
    assert developer.get(f"/preview/?{query}").status_code == 200
    stream = developer.get(f"/preview/stream/?{query}&token_budget=250")
    assert stream.status_code == 200 and b"event: complete" in b"".join(stream)
    records_flush()
    agent = AssemblyRecord.objects.filter(origin=RecordOrigin.AGENT).first()
    assert agent is not None
    assert developer.post(f"/console/traces/{agent.trace_id}/replay/", HTTP_HX_REQUEST="true").status_code == 200
    records_flush()


def settled() -> None:
    """Every record older than the rollups' settle time, then rolled up."""
    AssemblyRecord.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    rollup_catch_up()


def test_a_preview_and_a_replay_are_recorded_as_page_runs_and_an_api_request_as_an_agents(
    developer: Client, tenant: Tenant, session: Layer
) -> None:
    agent_request(tenant, session, "invoices")
    page_runs(developer, session)
    origins = sorted(AssemblyRecord.objects.values_list("origin", flat=True))
    assert origins == ["agent", "page", "page", "page"]


def test_the_dashboards_agent_figures_leave_page_runs_out_whether_rolled_up_or_in_the_tail(
    developer: Client, tenant: Tenant, session: Layer
) -> None:
    agent_request(tenant, session, "invoices")
    page_runs(developer, session)
    assert dashboard_figures(workspace=tenant.workspace, range_key="24h").totals["assemblies"] == 1  # the tail
    settled()
    assert dashboard_figures(workspace=tenant.workspace, range_key="24h").totals["assemblies"] == 1  # rolled up
    agent_request(tenant, session, "turn")
    settled()
    assert dashboard_figures(workspace=tenant.workspace, range_key="24h").totals["assemblies"] == 2


def test_the_console_shows_each_records_origin_and_filters_by_it(
    developer: Client, tenant: Tenant, session: Layer
) -> None:
    agent_request(tenant, session, "invoices")
    page_runs(developer, session)
    html = developer.get("/console/").content.decode()
    assert html.count('<span class="badge origin-page">page</span>') == 3
    assert html.count('<span class="badge origin-agent">agent</span>') == 1
    pages = developer.get("/console/", {"origin": "page"}).context["page"]
    assert pages.paginator.count == 3 and {r.origin for r in pages} == {"page"}


def test_the_session_trajectory_leaves_page_runs_out_unless_asked_for(
    developer: Client, tenant: Tenant, session: Layer
) -> None:
    agent_request(tenant, session, "invoices")
    page_runs(developer, session)
    assert session_trajectory(layer=session).total == 1
    assert session_trajectory(layer=session, page_runs=True).total == 4
    response = developer.get(f"/sessions/{session.pk}/")
    assert response.context["total_assemblies"] == 1
    assert developer.get(f"/sessions/{session.pk}/", {"page_runs": "1"}).context["total_assemblies"] == 4
