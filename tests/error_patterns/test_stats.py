"""attempt_stats: iterations per task group and same-error recurrence within a session."""

from __future__ import annotations

from apps.error_patterns.selectors import attempt_stats
from apps.error_patterns.services import attempt_record
from apps.layers.models import Layer
from tests.error_patterns.attempts import make_session
from tests.support.tenants import Tenant


def test_it_is_empty_without_attempts(tenant: Tenant) -> None:
    stats = attempt_stats(tenant.workspace.pk)
    assert stats["iterations_per_group"] == {"count": 0, "mean": 0.0, "p50": 0.0, "max": 0, "by_group": {}}
    assert stats["same_error_recurrence"]["rate"] == 0.0 and stats["same_error_recurrence"]["sessions"] == 0


def test_it_counts_iterations_per_group_and_recurring_errors(tenant: Tenant, session: Layer) -> None:
    other = make_session(tenant, "sess-2")

    def record(layer: Layer, group: str, outcome: str, error: str = "", agent: str = "developer") -> None:
        attempt_record(
            workspace=tenant.workspace, layer=layer, group_id=group, agent_type=agent, outcome=outcome, error=error
        )

    # Session 1, group a: the same error twice, then success (3 iterations, a recurrence).
    record(session, "a", "failed", "KeyError: 'user_id' at line 12")
    record(session, "a", "failed", "KeyError: 'account_id' at line 40")
    record(session, "a", "succeeded")
    # Session 1, group b: one success. Session 2, group a: two different errors, then success (3 iterations).
    record(session, "b", "succeeded")
    record(other, "a", "failed", "TimeoutError: timed out after 30s")
    record(other, "a", "failed", "ValueError: bad value")
    record(other, "a", "succeeded", agent="qa")
    stats = attempt_stats(tenant.workspace.pk)
    iterations = stats["iterations_per_group"]
    assert iterations["by_group"] == {f"{session.pk}:a": 3, f"{session.pk}:b": 1, f"{other.pk}:a": 3}
    assert iterations["count"] == 3 and iterations["max"] == 3 and iterations["p50"] == 3.0
    assert iterations["mean"] == round(7 / 3, 3)
    recurrence = stats["same_error_recurrence"]
    assert (recurrence["sessions"], recurrence["recurring"], recurrence["rate"]) == (2, 1, 0.5)
    assert (recurrence["failures"], recurrence["repeats"]) == (4, 1)
    qa = attempt_stats(tenant.workspace.pk, agent_type="qa")
    assert qa["iterations_per_group"]["by_group"] == {f"{other.pk}:a": 1}
    assert qa["same_error_recurrence"]["sessions"] == 0


def test_reported_iteration_numbers_count_when_higher(tenant: Tenant, session: Layer) -> None:
    attempt_record(workspace=tenant.workspace, layer=session, group_id="a", outcome="succeeded", iteration=4)
    assert attempt_stats(tenant.workspace.pk)["iterations_per_group"]["by_group"] == {f"{session.pk}:a": 4}


def test_other_workspaces_do_not_count(tenant: Tenant, other_tenant: Tenant, session: Layer) -> None:
    attempt_record(workspace=tenant.workspace, layer=session, group_id="a", outcome="failed", error="x")
    assert attempt_stats(other_tenant.workspace.pk)["iterations_per_group"]["count"] == 0
