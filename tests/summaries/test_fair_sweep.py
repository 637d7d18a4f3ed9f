"""The beat sweep shares itself between workspaces (issue 26): deepest layers first, and within a depth
the workspaces take turns, so one tenant's many due layers do not go before another's one."""

from __future__ import annotations

from apps.layers.models import Layer
from apps.layers.services import layer_create
from apps.summaries.services import summarize_due_layers
from tests.support.tenants import Tenant


def _teams(tenant: Tenant, count: int) -> list[Layer]:
    org = layer_create(workspace=tenant.workspace, kind="org", name="engineering", parent=tenant.root)
    return [layer_create(workspace=tenant.workspace, kind="team", name=f"team {n}", parent=org) for n in range(count)]


def test_a_workspace_with_one_due_team_is_summarized_second_though_another_has_six_due_before_it(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    crowd = _teams(tenant, 6)
    lone = _teams(other_tenant, 1)[0]  # made last: the oldest-first order put it after all six
    results = summarize_due_layers()
    teams = [r.layer_id for r in results if r.layer_id in {lone.pk, *(t.pk for t in crowd)}]
    assert teams[:2] == [crowd[0].pk, lone.pk], teams
    assert teams[2:] == [t.pk for t in crowd[1:]]
    kinds = [Layer.objects.get(pk=r.layer_id).kind for r in results]
    assert kinds == sorted(kinds, key=["team", "org", "company"].index)  # still deepest first
