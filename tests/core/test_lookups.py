"""`field__any=[...]` filters like `__in`, with the list as one array parameter."""

from __future__ import annotations

from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant


def test_any_matches_like_in_on_keys_and_foreign_keys(tenant: Tenant, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    a, _, c = items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=t) for t in "abc"])
    assert set(Item.objects.filter(pk__any=[a.pk, c.pk]).values_list("pk", flat=True)) == {a.pk, c.pk}
    assert not Item.objects.filter(pk__any=[]).exists()
    assert Item.objects.filter(layer_id__any=(tenant.root.pk,)).count() == 3
    assert Item.objects.filter(layer__any=[tenant.root.pk + 1000]).count() == 0
    with django_assert_num_queries(1) as captured:
        list(Item.objects.filter(pk__any=list(range(500))))
    assert "= ANY(" in captured.captured_queries[0]["sql"]
