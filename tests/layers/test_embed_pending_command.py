"""`manage.py embed_pending` embeds what waits and shows its progress as plain lines in a log."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant


@pytest.mark.django_db
def test_it_embeds_every_waiting_item_and_ends_with_a_progress_line(tenant: Tenant) -> None:
    items_create(
        layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content=f"Fact {n}.") for n in range(3)]
    )
    out, err = io.StringIO(), io.StringIO()
    call_command("embed_pending", "--workspace", tenant.workspace.slug, stdout=out, stderr=err)
    assert out.getvalue() == "Embedded 3 item(s).\n"
    lines = err.getvalue().splitlines()
    assert lines and lines[-1].startswith("embedding: 3/3 items (100%), ") and "done in" in lines[-1]
    assert not Item.objects.filter(workspace=tenant.workspace, embedding__isnull=True).exists()
