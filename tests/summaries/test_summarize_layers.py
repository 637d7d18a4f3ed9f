"""`manage.py summarize_layers`: the sweep of due layers, now, and a forced regeneration."""

from __future__ import annotations

import io

from django.core.management import call_command


def test_summarize_layers_runs_the_sweep_and_can_force(db: None) -> None:
    from apps.layers.services import ItemInput, items_create
    from apps.summaries.models import Summary
    from tests.support.tenants import make_tenant

    tenant = make_tenant("sweep")
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", stdout=out)
    assert "1 layers: 1 generated, 0 skipped, 0 degraded" in out.getvalue()
    assert Summary.objects.filter(layer=tenant.root).count() == 3
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", stdout=out)
    assert "0 layers" in out.getvalue()  # nothing due any more
    out = io.StringIO()
    call_command("summarize_layers", workspace="sweep", force=True, stdout=out)
    assert "1 generated" in out.getvalue()
