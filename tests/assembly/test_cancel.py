"""A cancelled assembly stops at its next stage boundary and leaves no record, cache entry or warm-up."""

from __future__ import annotations

import pytest

from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, records_flush
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.metrics.registry import ASSEMBLIES_CANCELLED
from tests.support.tenants import Tenant


class CancelAfter:
    """Says "cancelled" from its `n`-th question on, and counts the questions."""

    def __init__(self, n: int) -> None:
        self.n, self.asked = n, 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked >= self.n


@pytest.fixture
def layer(tenant: Tenant) -> Layer:
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content="Invoices go out nightly.")])
    return project


def params(layer: Layer) -> ContextParams:
    return ContextParams(layer_id=layer.pk, query="invoices", token_budget=200, timeout_ms=0)


def stopped(stage: str) -> float:
    return ASSEMBLIES_CANCELLED.labels(stage=stage)._value.get()


def test_a_cancel_before_the_first_stage_stops_there_and_leaves_nothing(tenant: Tenant, layer: Layer) -> None:
    before = stopped("embedding")
    with pytest.raises(AssemblyCancelled) as caught:
        context_assemble(workspace=tenant.workspace, params=params(layer), cancelled=lambda: True)
    assert caught.value.stage == "embedding" and stopped("embedding") == before + 1
    records_flush()
    assert not AssemblyRecord.objects.exists()
    assert context_assemble(workspace=tenant.workspace, params=params(layer)).cached is False  # nothing cached


def test_a_cancel_mid_way_stops_at_the_next_boundary_not_at_once(tenant: Tenant, layer: Layer) -> None:
    whole = CancelAfter(10_000)
    context_assemble(
        workspace=tenant.workspace,
        params=params(
            layer,
        ),
        cancelled=whole,
    )
    boundaries = whole.asked  # every stage boundary of a whole assembly asked once, and once before the record
    assert boundaries >= 6
    records_flush()
    AssemblyRecord.objects.all().delete()
    later = CancelAfter(3)
    with pytest.raises(AssemblyCancelled) as caught:
        context_assemble(
            workspace=tenant.workspace,
            params=ContextParams(layer_id=layer.pk, query="nightly", timeout_ms=0),
            cancelled=later,
        )
    assert later.asked == 3 and caught.value.stage not in ("embedding", "record")
    records_flush()
    assert not AssemblyRecord.objects.exists()


def test_a_cancel_after_packing_still_records_nothing(tenant: Tenant, layer: Layer) -> None:
    whole = CancelAfter(10_000)
    context_assemble(workspace=tenant.workspace, params=params(layer), cancelled=whole)
    last = CancelAfter(whole.asked)  # cancelled at the very last question: after packing, before the record
    with pytest.raises(AssemblyCancelled) as caught:
        context_assemble(
            workspace=tenant.workspace,
            params=ContextParams(layer_id=layer.pk, query="other", timeout_ms=0),
            cancelled=last,
        )
    assert caught.value.stage == "record"
    records_flush()
    assert AssemblyRecord.objects.count() == 1  # the first, whole one only
