"""The higher apps answer layers' item writes through its hooks (apps/layers/signals.py), so layers imports
none of them (the import check itself is tests/test_dependencies.py)."""

from __future__ import annotations

import pytest

from apps.layers.services import ItemInput, items_create
from tests.conftest import Tenant


@pytest.mark.django_db
def test_the_higher_apps_answer_item_writes_through_the_hooks(tenant: Tenant) -> None:
    (decision,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="message", role="user", content="We decided to ship on Friday.")]
    )
    assert decision.importance == 0.9 and decision.metadata["importance_source"] == "decision"  # conversations
