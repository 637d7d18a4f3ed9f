"""Fair shares of a worker between workspaces (issue 26): a cap per workspace and in all, freed slots
to the workspace with the fewest running, and 429 `overloaded` with Retry-After past a short wait."""

from __future__ import annotations

import functools
import threading
import time

import pytest
from pytest_django.fixtures import SettingsWrapper

from apps.core.fair_share import FairGate, gate
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until


def test_it_lets_a_workspace_run_only_its_share_and_refuses_the_next_after_the_wait() -> None:
    slots = FairGate(total=0, per_workspace=2)
    assert slots.enter(workspace_id=1, wait=0) and slots.enter(workspace_id=1, wait=0)
    started = time.monotonic()
    assert not slots.enter(workspace_id=1, wait=0.05)
    assert 0.04 <= time.monotonic() - started < 1
    assert slots.enter(workspace_id=2, wait=0)  # another workspace has its own share
    slots.leave(workspace_id=1)
    assert slots.enter(workspace_id=1, wait=0)
    assert (slots.running(1), slots.running(2), slots.running()) == (2, 1, 3)


def test_a_freed_slot_goes_to_the_workspace_with_the_fewest_running_though_another_queued_first() -> None:
    slots = FairGate(total=2, per_workspace=0)
    assert slots.enter(workspace_id=1, wait=0) and slots.enter(workspace_id=1, wait=0)
    order: list[int] = []

    def wait_for_a_slot(workspace_id: int) -> None:
        if slots.enter(workspace_id=workspace_id, wait=5):
            order.append(workspace_id)

    flood = [threading.Thread(target=wait_for_a_slot, args=(1,)) for _ in range(5)]
    for thread in flood:
        thread.start()
    time.sleep(0.1)  # the flood queues first
    victim = threading.Thread(target=wait_for_a_slot, args=(2,))
    victim.start()
    time.sleep(0.1)
    slots.leave(workspace_id=1)
    victim.join(5)
    assert order == [2]  # the victim, though five of workspace 1 waited longer
    for _ in range(5):
        slots.leave(workspace_id=1 if slots.running(1) else 2)
        time.sleep(0.02)
    for thread in flood:
        thread.join(5)
    assert order.count(1) == 5


def test_turns_go_round_the_workspaces_when_the_freed_slot_was_the_floods_own() -> None:
    # One slot in all: the flood's slot frees and both workspaces then run none. Its five waiters are
    # older, but the other tenant, never admitted yet, goes first; then the flood, then the tenant again.
    slots = FairGate(total=1, per_workspace=0)
    assert slots.enter(workspace_id=1, wait=0)
    order: list[int] = []
    queued = threading.Semaphore(0)

    def wait_for_a_slot(workspace_id: int) -> None:
        if slots.enter(workspace_id=workspace_id, wait=10, before_waiting=queued.release):
            order.append(workspace_id)

    flood = [threading.Thread(target=wait_for_a_slot, args=(1,)) for _ in range(5)]
    for thread in flood:
        thread.start()
        assert queued.acquire(timeout=5)  # each waits in turn: the flood's seq are older
    victim = threading.Thread(target=wait_for_a_slot, args=(2,))
    victim.start()
    assert queued.acquire(timeout=5)
    slots.leave(workspace_id=1)
    victim.join(5)
    assert order == [2]
    slots.leave(workspace_id=2)
    wait_until(lambda: len(order) == 2)
    again = threading.Thread(target=wait_for_a_slot, args=(2,))
    again.start()
    assert queued.acquire(timeout=5)
    slots.leave(workspace_id=1)  # the flood ran last: the tenant's second request goes before its four
    again.join(5)
    assert order == [2, 1, 2]
    for admitted in range(4, 8):
        slots.leave(workspace_id=2 if order[-1] == 2 else 1)
        wait_until(functools.partial(_has_length, order, admitted))
    for thread in flood:
        thread.join(5)
    assert order == [2, 1, 2, 1, 1, 1, 1]


def test_a_waiter_that_used_the_slot_more_does_not_pause_the_running_request() -> None:
    slots = FairGate(total=1, per_workspace=0)
    assert slots.enter(workspace_id=1, wait=0)
    slots.leave(workspace_id=1, since=time.monotonic() - 1.0)  # workspace 1 is the heavy one
    assert slots.enter(workspace_id=2, wait=0)
    since = time.monotonic() - 0.05
    queued = threading.Semaphore(0)
    got: list[bool] = []
    waiter = threading.Thread(
        target=lambda: got.append(slots.enter(workspace_id=1, wait=5, before_waiting=queued.release))
    )
    waiter.start()
    assert queued.acquire(timeout=5)
    assert slots.checkpoint(workspace_id=2, since=since) == since  # the light one goes on
    assert got == []
    slots.leave(workspace_id=2, since=since)
    waiter.join(5)
    assert got == [True]


def test_a_paused_request_keeps_its_workspaces_share_and_goes_on_before_the_workspaces_next() -> None:
    # One slot, one per workspace: workspace 1 (heavy) is paused for workspace 2; a second request of
    # workspace 1 queues behind the paused one, which goes on first once workspace 2 is done.
    slots = FairGate(total=1, per_workspace=1)
    assert slots.enter(workspace_id=1, wait=0)
    slots.leave(workspace_id=1, since=time.monotonic() - 1.0)
    assert slots.enter(workspace_id=1, wait=0)
    since = time.monotonic()
    order: list[str] = []
    queued = threading.Semaphore(0)

    def light() -> None:
        if slots.enter(workspace_id=2, wait=5, before_waiting=queued.release):
            order.append("light")
            wait_until(lambda: slots.waiting(1) == 2, timeout=5, interval=0.01)  # paused + the next one
            slots.leave(workspace_id=2, since=time.monotonic())

    def heavy_next() -> None:
        if slots.enter(workspace_id=1, wait=5, before_waiting=queued.release):
            order.append("heavy next")
            slots.leave(workspace_id=1)

    threading.Thread(target=light).start()
    assert queued.acquire(timeout=5)
    nxt = threading.Thread(target=heavy_next)

    def start_next_once_paused() -> None:
        wait_until(lambda: "light" in order, timeout=5, interval=0.01)
        nxt.start()

    starter = threading.Thread(target=start_next_once_paused)
    starter.start()
    resumed = slots.checkpoint(workspace_id=1, since=since)  # gives the slot to workspace 2, then goes on
    order.append("heavy goes on")
    assert resumed > since
    assert order == ["light", "heavy goes on"]  # the next request of workspace 1 did not pass the paused one
    slots.leave(workspace_id=1, since=resumed)
    starter.join(5)
    nxt.join(5)
    assert order == ["light", "heavy goes on", "heavy next"]


def test_it_gives_back_the_waiting_requests_database_connection_before_it_waits() -> None:
    slots = FairGate(total=1, per_workspace=0)
    assert slots.enter(workspace_id=1, wait=0)
    given_back: list[bool] = []
    assert not slots.enter(workspace_id=2, wait=0.01, before_waiting=lambda: given_back.append(True))
    assert given_back == [True]
    assert slots.enter(workspace_id=2, wait=0, before_waiting=lambda: given_back.append(False)) is False
    assert given_back == [True, False]
    slots.leave(workspace_id=1)
    assert slots.enter(workspace_id=2, wait=0)  # the refused waiters left no trace in the queue


def test_a_context_request_past_its_workspaces_share_is_told_overloaded_and_another_tenant_is_served(
    tenant: Tenant, other_tenant: Tenant, settings: SettingsWrapper
) -> None:
    settings.WORKSPACE_MAX_CONCURRENT, settings.WORKER_MAX_CONCURRENT, settings.WORKSPACE_QUEUE_MS = 1, 0, 20
    slots = gate()
    assert slots.enter(workspace_id=tenant.workspace.pk, wait=0)  # its one slot, busy
    try:
        body = {"layer": tenant.root.pk, "query": "what did we decide?", "token_budget": 500}
        refused = tenant.client.post("/api/v1/context/", body, format="json")
        other_body = {**body, "layer": other_tenant.root.pk}
        served = other_tenant.client.post("/api/v1/context/", other_body, format="json")
    finally:
        slots.leave(workspace_id=tenant.workspace.pk)
    assert refused.status_code == 429, refused.content
    assert refused.json()["error"]["code"] == "overloaded" and int(refused["Retry-After"]) >= 1
    assert served.status_code == 200, served.content
    again = tenant.client.post("/api/v1/context/", body, format="json")
    assert again.status_code == 200, again.content


def test_a_lone_workspaces_burst_waits_longer_for_its_share_than_one_that_crowds_another(
    tenant: Tenant, settings: SettingsWrapper
) -> None:
    from apps.core.fair_share import workspace_slot

    settings.WORKSPACE_MAX_CONCURRENT, settings.WORKER_MAX_CONCURRENT, settings.WORKSPACE_QUEUE_MS = 1, 0, 100
    slots = gate()
    ws = tenant.workspace.pk
    assert slots.enter(workspace_id=ws, wait=0) and slots.alone(ws)
    threading.Timer(0.15, slots.leave, kwargs={"workspace_id": ws}).start()
    with workspace_slot(workspace_id=ws):  # alone: it may wait 4 x 100 ms, and its slot frees at 150 ms
        assert slots.running(ws) == 1
    assert slots.enter(workspace_id=ws, wait=0) and slots.enter(workspace_id=-1, wait=0)
    assert not slots.alone(ws)
    try:
        started = time.monotonic()
        with pytest.raises(Exception, match="share"):
            with workspace_slot(workspace_id=ws):
                pass
        assert time.monotonic() - started < 0.35  # with another tenant here it waited 100 ms, not 400
    finally:
        slots.leave(workspace_id=ws)
        slots.leave(workspace_id=-1)


def _has_length(values: list[int], length: int) -> bool:
    return len(values) == length


@pytest.mark.django_db
def test_the_context_api_holds_one_slot_for_the_whole_request_and_the_assembly_runs_in_it(
    tenant: Tenant, settings: SettingsWrapper
) -> None:
    # One slot in all and one per workspace: the view's slot and the assembly's are the same one (a
    # second would wait for the first, and be refused).
    settings.WORKSPACE_MAX_CONCURRENT, settings.WORKER_MAX_CONCURRENT, settings.WORKSPACE_QUEUE_MS = 1, 1, 20
    from apps.core.fair_share import workspace_slot

    with workspace_slot(workspace_id=tenant.workspace.pk) as outer:
        with workspace_slot(workspace_id=tenant.workspace.pk) as inner:
            assert inner is outer and gate().running() == 1
    assert gate().running() == 0
    answer = tenant.client.post(
        "/api/v1/context/", {"layer": tenant.root.pk, "query": "what changed", "token_budget": 300}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert gate().running() == 0
    refused = tenant.client.post("/api/v1/context/", {"layer": tenant.root.pk, "token_budget": -1}, format="json")
    assert refused.status_code == 400 and gate().running() == 0  # bad input is still a 400, the slot given back
