"""A flood's assembly gives its process's slot up between stages to a tenant that used the slots
less (apps/core/fair_share.py): the tenant waits for the stage the flood is in, not for its whole
assembly; the flood goes on afterwards, and its answer says how long it was paused (Server-Timing)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from pytest_django.fixtures import SettingsWrapper

from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, configured_sources
from apps.core import server_timing
from apps.core.fair_share import gate
from tests.support.api import bulk, layer
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

FLOOD_MID_ASSEMBLY = threading.Event()
GO_ON = threading.Event()
FLOOD_WORKSPACE: list[int] = []


class HeldSource(CandidateSource):
    """Holds the flood's assembly between two stages until the test lets it go on (once)."""

    name = "held"

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        if request.workspace.pk in FLOOD_WORKSPACE and not FLOOD_MID_ASSEMBLY.is_set():
            FLOOD_MID_ASSEMBLY.set()
            assert GO_ON.wait(10)
        return Found()


@pytest.fixture
def held() -> Iterator[None]:
    configured_sources.cache_clear()
    FLOOD_MID_ASSEMBLY.clear()
    GO_ON.clear()
    FLOOD_WORKSPACE.clear()
    sources = list(settings.CONTEXT_SOURCES)
    sources.insert(1, "tests.assembly.test_slot_pause.HeldSource")  # after the search: more stages follow
    with override_settings(CONTEXT_SOURCES=sources):
        yield
    GO_ON.set()
    configured_sources.cache_clear()


@pytest.mark.django_db(transaction=True)
def test_a_floods_assembly_pauses_between_stages_for_a_tenant_that_used_the_slot_less(
    tenant: Tenant, other_tenant: Tenant, settings: SettingsWrapper, held: None
) -> None:
    settings.WORKER_MAX_CONCURRENT, settings.WORKSPACE_MAX_CONCURRENT, settings.WORKSPACE_QUEUE_MS = 1, 0, 2000
    flood, victim = tenant.workspace.pk, other_tenant.workspace.pk
    for t in (tenant, other_tenant):
        session = layer(t, "session", t.root.pk, external_id="s-1")
        bulk(t, session, [{"kind": "message", "role": "user", "content": f"Line {n} about otters."} for n in range(5)])
    slots = gate()
    assert slots.enter(workspace_id=flood, wait=0)
    slots.leave(workspace_id=flood, since=time.monotonic() - 1.0)  # the flood used the slot for 1 s lately
    FLOOD_WORKSPACE.append(flood)
    finished: list[str] = []
    answers: dict[str, Any] = {}

    def post(name: str, t: Tenant) -> None:
        answers[name] = t.client.post(
            "/api/v1/context/", {"layer": t.root.pk, "query": "otters", "token_budget": 500}, format="json"
        )
        finished.append(name)

    flood_thread = threading.Thread(target=post, args=("flood", tenant))
    flood_thread.start()
    assert FLOOD_MID_ASSEMBLY.wait(10)  # the flood holds the one slot, between two of its stages
    victim_thread = threading.Thread(target=post, args=("victim", other_tenant))
    victim_thread.start()
    wait_until(lambda: slots.waiting(victim) == 1, timeout=10, interval=0.01, what="the victim to queue")
    GO_ON.set()  # the flood's next stage boundary gives the slot to the victim
    victim_thread.join(30)
    flood_thread.join(30)
    # Both answered; which thread appends first after the hand-back is a race (the victim's answer is
    # still being rendered while the flood's last stages run), so the order is read from the timings:
    # the flood paused for the victim (a flood that kept the slot would show no pause), the victim waited.
    assert sorted(finished) == ["flood", "victim"]
    assert answers["flood"].status_code == 200 and answers["victim"].status_code == 200
    flood_timing = dict(server_timing.parse(answers["flood"]["Server-Timing"]))
    victim_timing = dict(server_timing.parse(answers["victim"]["Server-Timing"]))
    assert flood_timing["slot-paused"] > 0 and victim_timing["slot-paused"] == 0
    assert victim_timing["slot-wait"] > 0 and {"slot", "app"} <= set(victim_timing)
    assert slots.running() == 0 and slots.waiting(flood) == 0
