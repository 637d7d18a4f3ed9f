"""An import links its messages after creating them (`messages_relink`): parents and importance as given,
and nothing outside the layer it names."""

from __future__ import annotations

import pytest

from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create, layer_create, messages_relink
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def messages(tenant: Tenant, name: str, count: int) -> list[Item]:
    session = layer_create(workspace=tenant.workspace, kind="session", name=name, parent=tenant.root)
    return items_create(
        layer=session, items=[ItemInput(kind="message", role="user", content=f"Turn {n}.") for n in range(count)]
    )


def test_it_sets_parents_and_importance_in_one_statement(tenant: Tenant) -> None:
    first, second, third = messages(tenant, "S", 3)
    changed = messages_relink(layer=first.layer, links=[(second.pk, first.pk, 0.8), (third.pk, second.pk, 0.2)])
    assert changed == 2
    rows = dict(Item.objects.filter(pk__in=[second.pk, third.pk]).values_list("pk", "parent_id"))
    assert rows == {second.pk: first.pk, third.pk: second.pk}
    assert Item.objects.get(pk=third.pk).importance == 0.2


def test_it_changes_no_message_of_another_layer_and_links_to_none(tenant: Tenant) -> None:
    (mine,) = messages(tenant, "Mine", 1)
    theirs, other = messages(tenant, "Theirs", 2)
    assert messages_relink(layer=mine.layer, links=[(theirs.pk, None, 1.0), (mine.pk, other.pk, 0.9)]) == 0
    assert Item.objects.get(pk=theirs.pk).importance == 0.5
    assert Item.objects.get(pk=mine.pk).parent_id is None
