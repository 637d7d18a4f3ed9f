"""The higher apps answer layers' item writes through its hooks (apps/layers/signals.py), so layers imports
none of them (the import check itself is tests/test_dependencies.py)."""

from __future__ import annotations

import pytest

from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.models import LayerConfig
from tests.support.tenants import Tenant


@pytest.mark.django_db
def test_the_higher_apps_answer_item_writes_through_the_hooks(tenant: Tenant) -> None:
    (decision,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="message", role="user", content="We decided to ship on Friday.")]
    )
    assert decision.importance == 0.9 and decision.metadata["importance_source"] == "decision"  # conversations


@pytest.mark.django_db
def test_a_new_layer_gets_its_summary_configuration_and_its_item_writes_count_toward_it(tenant: Tenant) -> None:
    project = layer_create(workspace=tenant.workspace, kind="project", name="P", parent=tenant.root)
    config = LayerConfig.objects.get(layer=project)  # summaries answered layer_created
    assert (config.update_on_changes, config.changes_since_summary) == (3, 0)
    items_create(layer=project, items=[ItemInput(kind="memory", type="fact", content=f"Fact {n}.") for n in (1, 2)])
    config.refresh_from_db()
    assert config.changes_since_summary == 2  # summaries answered changes_counted(count=2)
