"""Parallel agents reporting attempts lose no update.

Real PostgreSQL, one connection per thread (transactional test: each thread's work commits).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from apps.error_patterns.models import Attempt, ErrorPattern, HintInjection
from apps.error_patterns.services import attempt_record, hints_injected
from apps.layers.models import Layer
from apps.layers.services import layer_create
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db(transaction=True)
THREADS = 8


def run_in_threads(work: Callable[[int], None], count: int = THREADS) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def worker(n: int) -> None:
        try:
            barrier.wait(10)
            work(n)
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not any(thread.is_alive() for thread in threads), "a report did not finish: deadlock?"
    assert errors == []


def sessions(t: Tenant, count: int) -> list[Layer]:
    return [
        layer_create(workspace=t.workspace, kind="session", name=f"s{i}", parent=t.root, external_id=f"s{i}")
        for i in range(count)
    ]


def test_parallel_captures_of_one_signature_count_every_occurrence() -> None:
    t = make_tenant("parallel")
    layers = sessions(t, THREADS)
    rounds = 4

    def work(n: int) -> None:
        for r in range(rounds):
            error = f"TimeoutError: worker {n} timed out after {r + 30}s on /srv/jobs/{n}/{r}.py"
            attempt_record(workspace=t.workspace, layer=layers[n], outcome="failed", group_id=f"g{r}", error=error)
            attempt_record(
                workspace=t.workspace,
                layer=layers[n],
                outcome="succeeded",
                group_id=f"g{r}",
                solution="Raise the timeout.",
            )

    run_in_threads(work)
    pattern = ErrorPattern.objects.get(workspace=t.workspace)
    assert pattern.occurrences == THREADS * rounds
    assert Attempt.objects.filter(workspace=t.workspace).count() == 2 * THREADS * rounds
    assert not Attempt.objects.filter(workspace=t.workspace, outcome="failed", resolved=False).exists()


def test_concurrent_successes_claim_a_failure_once() -> None:
    t = make_tenant("claims")
    (layer,) = sessions(t, 1)
    attempt_record(workspace=t.workspace, layer=layer, outcome="failed", group_id="g", error="KeyError: 'x'")
    captured: list[bool] = []

    def work(n: int) -> None:
        result = attempt_record(workspace=t.workspace, layer=layer, outcome="succeeded", group_id="g", solution="fix")
        captured.append(result.captured is not None)

    run_in_threads(work)
    assert captured.count(True) == 1
    assert ErrorPattern.objects.get(workspace=t.workspace).occurrences == 1


def test_parallel_failures_after_hints_lower_the_confidence_for_each_one() -> None:
    t = make_tenant("feedback")
    layers = sessions(t, THREADS)
    attempt_record(
        workspace=t.workspace, layer=layers[0], outcome="failed", group_id="seed", error="OSError: disk full"
    )
    pattern = attempt_record(
        workspace=t.workspace, layer=layers[0], outcome="succeeded", group_id="seed", solution="Free space."
    ).captured
    assert pattern is not None
    for layer in layers:
        hints_injected(
            workspace_id=t.workspace.pk, layer_id=layer.pk, agent_type="", group_id="", pattern_ids=[pattern.pk]
        )
    start = pattern.confidence

    def work(n: int) -> None:
        for _ in range(2):  # the second failure finds the injection claimed already
            attempt_record(
                workspace=t.workspace, layer=layers[n], outcome="failed", group_id="g", error="OSError: disk full"
            )

    run_in_threads(work)
    pattern.refresh_from_db()
    assert pattern.failures == THREADS
    assert pattern.confidence == pytest.approx(start * 0.8**THREADS)
    assert not HintInjection.objects.filter(pattern=pattern, resolved_at__isnull=True).exists()
