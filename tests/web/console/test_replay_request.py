"""A recorded request replays as the request that was sent: the record keeps every ContextParams field in
the one JSON shape (apps/assembly/recorded.py) except the query vector, and a record written in the older,
flat shape still replays and still shows its decisions."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, records_flush
from apps.core import embeddings
from apps.layers.services import ItemInput, items_create, layer_create
from apps.web.console.replay import record_replay, replay_params
from apps.web.console.traces import trace_view
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

VECTOR_NOTE = "the original sent a query vector, which is not recorded: the replay searches by the query text"


@pytest.fixture
def session(tenant: Tenant) -> tuple[int, int]:
    """A session layer (external id sess-1) and the id of its last message."""
    layer = layer_create(workspace=tenant.workspace, kind="session", name="Billing", parent=tenant.root)
    layer.external_id = "sess-1"
    layer.save(update_fields=["external_id"])
    items = items_create(
        layer=layer,
        items=[
            ItemInput(kind="message", role="user", content="When does the billing cron job run?"),
            ItemInput(kind="message", role="assistant", content="At 02:00 UTC; it emails a report."),
        ],
    )
    return layer.pk, items[-1].pk


def every_field(layer_id: int, message_id: int) -> ContextParams:
    """A request that sets every field ContextParams has (a test below holds it to the dataclass)."""
    vector, _ = embeddings.embed_query("billing cron")
    return ContextParams(
        layer_id=layer_id,
        layer_external_id="sess-1",
        query="when does the billing cron job run?",
        query_vector=tuple(float(x) for x in vector),
        token_budget=900,
        model="gpt-4o",
        profile="nobody",  # unknown: a warning, not an error
        format="text",
        kinds=("message",),
        types=("fact", "decision"),
        since=datetime(2020, 1, 1, tzinfo=UTC),
        until=datetime(2100, 1, 1, 12, 30, tzinfo=UTC),
        min_confidence=0.25,
        group_id="team-a",
        agent_type="coder",
        iteration=2,
        conversation_id="sess-1",
        message_id=message_id,
        context_window=10_000,
        tokens_used=9_000,
        ranking="recency",
        template="chat",
        expand_related=1,
        error="KeyError: 'invoice'",
        timeout_ms=0,
        user="nobody",
        include_superseded=True,
        exclude=("item:999999",),
    )


def recorded(tenant: Tenant, params: ContextParams) -> AssemblyRecord:
    result = context_assemble(workspace=tenant.workspace, params=params)
    records_flush()
    return AssemblyRecord.objects.get(trace_id=result.trace_id)


def test_the_request_sets_every_field_contextparams_has(session: tuple[int, int]) -> None:
    params = every_field(*session)
    defaults = ContextParams()
    unset = [name for name in ContextParams.__dataclass_fields__ if getattr(params, name) == getattr(defaults, name)]
    assert unset == []  # a new field must be added to `every_field`, and so to the round trip


@override_settings(TRACE_SAMPLE_RATE=1.0)
def test_a_request_with_every_field_replays_as_sent_but_for_its_query_vector(
    tenant: Tenant, session: tuple[int, int]
) -> None:
    params = every_field(*session)
    record = recorded(tenant, params)
    assert "query_vector" in record.request["not_recorded"] and record.request["query_vector"] is None
    assert record.request["resolved"]["zone"] == record.zone and record.request["resolved"]["ranking"] == "recency"
    replayed, notes = replay_params(request=record.request, layer_id=record.layer_id)
    assert replayed == replace(params, query_vector=None)
    assert notes == [VECTOR_NOTE]  # the zone comes back: its context window and usage are recorded


def test_a_secret_in_the_query_or_the_error_is_recorded_and_replayed_redacted(
    tenant: Tenant, session: tuple[int, int]
) -> None:
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    params = ContextParams(layer_id=session[0], query=f"why does {secret} fail?", error=f"401 for {secret}")
    record = recorded(tenant, params)
    assert secret not in str(record.request)
    replayed, notes = replay_params(request=record.request, layer_id=record.layer_id)
    assert "[REDACTED" in replayed.query and "[REDACTED" in replayed.error and secret not in replayed.error
    assert notes == ["the recorded query is redacted: the replay searches with the redaction markers"]


def older_shape(record: AssemblyRecord) -> dict[str, object]:
    """`record`'s request as records were written before the one shape: the resolved values, flat."""
    resolved = record.request["resolved"]
    return {
        **resolved,
        "query": record.request["query"],
        "query_vector": False,
        "profile": None,
        "kinds": [],
        "exclude": [],
        "group_id": "",
        "conversation_id": None,
        "expand_related": 0,
        "include_superseded": False,
    }


@override_settings(TRACE_SAMPLE_RATE=1.0, ASSEMBLY_CACHE_SECONDS=0)
def test_a_record_in_the_older_shape_still_replays_and_shows_its_decisions(
    tenant: Tenant, session: tuple[int, int]
) -> None:
    params = ContextParams(layer_id=session[0], query="billing cron", token_budget=400, timeout_ms=0, format="text")
    record = recorded(tenant, params)
    AssemblyRecord.objects.filter(pk=record.pk).update(request=older_shape(record))
    record.refresh_from_db()
    replayed, notes = replay_params(request=record.request, layer_id=record.layer_id)
    assert replayed == replace(params, model=record.model, types=(), ranking="default", timeout_ms=None)
    assert notes == []
    diff = record_replay(record=record)
    assert diff.compared and diff.unchanged
    view = trace_view(record=record)
    assert view.decided["format"] == "text" and view.decided["zone"] == record.zone and view.weights_kept


def test_an_older_record_in_a_tight_zone_says_the_replay_runs_in_the_normal_one() -> None:
    older = {"layer": 7, "query": "x", "query_vector": True, "zone": "critical", "token_budget": 300}
    replayed, notes = replay_params(request=older, layer_id=None)
    assert replayed == ContextParams(layer_id=7, query="x", token_budget=300)
    assert notes[0] == VECTOR_NOTE and "the original ran in the critical zone" in notes[1]
