"""The preview's what-if rows are what a real run at their budget gives (issue 19: a row said
41 chunks at 2000 tokens and a click on it gave 50), in the API's `what_if` as on the page."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, context_preview, records_flush
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(tenant: Tenant) -> Layer:
    """A 120-turn chat whose hits bring their neighbouring turns: more of them at a larger budget."""
    session = layer_create(workspace=tenant.workspace, kind="session", name="Trip", parent=tenant.root)
    start = timezone.now() - timedelta(days=3)
    topics = ("the car", "the hike", "the dinner", "the weather", "the new job", "the garden")
    items_create(
        layer=session,
        items=[
            ItemInput(
                kind="message",
                role="user" if n % 2 == 0 else "assistant",
                content=f"Turn {n} is about {topics[n % len(topics)]} and what we planned for it next week.",
                created_at=start + timedelta(minutes=n),
            )
            for n in range(120)
        ],
    )
    return session


def test_each_what_if_row_is_what_a_real_run_at_its_budget_gives(tenant: Tenant, chat: Layer) -> None:
    asked = ContextParams(layer_id=chat.pk, query="what about the car", token_budget=300, format="text", timeout_ms=0)
    preview = context_preview(workspace=tenant.workspace, params=asked, what_if=(150, 300, 600, 1200))
    assert [row.token_budget for row in preview.what_if] == [150, 300, 600, 1200]
    for row in preview.what_if:
        real = context_assemble(workspace=tenant.workspace, params=replace(asked, token_budget=row.token_budget))
        assert (row.items_included, row.tokens_used, row.truncated_count) == (
            len(real.chunks),
            real.total_tokens,
            real.truncated_count,
        ), row.token_budget
    own = next(row for row in preview.what_if if row.token_budget == 300)
    assert (own.items_included, own.tokens_used) == (len(preview.result.chunks), preview.result.total_tokens)


def test_the_what_if_runs_are_neither_recorded_nor_cached(tenant: Tenant, chat: Layer) -> None:
    asked = ContextParams(layer_id=chat.pk, query="the hike", token_budget=300, timeout_ms=0)
    context_preview(workspace=tenant.workspace, params=asked, what_if=(150, 600))
    records_flush()
    assert AssemblyRecord.objects.filter(workspace=tenant.workspace).count() == 1  # the preview's own
    at_600 = context_assemble(workspace=tenant.workspace, params=replace(asked, token_budget=600))
    assert at_600.cached is False


def test_the_profile_trial_and_replay_ask_for_no_what_if(tenant: Tenant, chat: Layer) -> None:
    asked = ContextParams(layer_id=chat.pk, query="the dinner", token_budget=300, timeout_ms=0)
    assert context_preview(workspace=tenant.workspace, params=asked, what_if=()).what_if == ()
