"""A workspace's share of the machine across worker processes (apps/core/machine_share.py): alone it
has no cap; with another workspace present it runs at most WORKSPACE_MACHINE_MAX heavy requests on
the machine, the next waits and is refused `overloaded` past the wait; a killed holder frees its slot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_django.fixtures import SettingsWrapper

from apps.core import machine_share
from apps.core.machine_share import MachineSlot
from tests.support.tenants import Tenant


@pytest.fixture
def share(settings: SettingsWrapper, tmp_path: Path) -> Path:
    settings.MACHINE_SHARE_DIR = tmp_path
    settings.WORKSPACE_MACHINE_MAX = 1
    return tmp_path


def test_a_workspace_alone_on_the_machine_has_no_machine_cap(share: Path) -> None:
    assert machine_share.take(1, wait=0) is None
    assert machine_share.take(1, wait=0) is None  # a second at once: still no cap, nobody else is here


def test_with_another_workspace_present_a_workspace_runs_its_machine_share_and_the_next_waits(share: Path) -> None:
    assert not machine_share.others_present(2)  # workspace 2 begins a request: now present
    first = machine_share.take(1, wait=0)
    assert isinstance(first, MachineSlot)
    started = time.monotonic()
    assert machine_share.take(1, wait=0.05) is False  # its one machine slot is taken
    assert 0.04 <= time.monotonic() - started < 1
    other = machine_share.take(2, wait=0)
    assert isinstance(other, MachineSlot)  # the other workspace has its own
    first.release()
    again = machine_share.take(1, wait=0)
    assert isinstance(again, MachineSlot)
    again.release()
    other.release()


def test_the_cap_lifts_while_waiting_once_the_other_workspace_is_gone(
    share: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(machine_share, "PRESENT_SECONDS", 0.05)
    machine_share.others_present(2)
    first = machine_share.take(1, wait=0)
    assert isinstance(first, MachineSlot)
    assert machine_share.take(1, wait=2) is None  # workspace 2 was last seen 50 ms ago: no cap, no refusal
    first.release()


def test_a_killed_holder_frees_its_machine_slot(share: Path) -> None:
    machine_share.others_present(2)
    bucket = 1 % machine_share.BUCKETS
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(share / f'{bucket}.0.lock')!r}, os.O_RDWR | os.O_CREAT, 0o600)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert machine_share.take(1, wait=0.02) is False  # another process holds workspace 1's one slot
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        slot = machine_share.take(1, wait=1)
        assert isinstance(slot, MachineSlot)  # the kernel dropped the dead process's lock
        slot.release()
    finally:
        if holder.poll() is None:
            holder.kill()


def test_a_directory_that_cannot_be_written_turns_the_share_off(settings: SettingsWrapper, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    settings.MACHINE_SHARE_DIR = blocker / "share"  # under a file: cannot be made
    settings.WORKSPACE_MACHINE_MAX = 1
    assert not machine_share.others_present(2)
    assert machine_share.take(1, wait=0) is None


@pytest.mark.django_db
def test_a_context_request_past_its_machine_share_is_told_overloaded_and_the_other_tenant_is_served(
    tenant: Tenant, other_tenant: Tenant, share: Path, settings: SettingsWrapper
) -> None:
    settings.WORKSPACE_QUEUE_MS = 20
    machine_share.others_present(other_tenant.workspace.pk)
    held = machine_share.take(tenant.workspace.pk, wait=0)  # as if another worker ran the tenant's request
    assert isinstance(held, MachineSlot)
    try:
        body = {"layer": tenant.root.pk, "query": "what did we decide?", "token_budget": 500}
        refused = tenant.client.post("/api/v1/context/", body, format="json")
        served = other_tenant.client.post("/api/v1/context/", {**body, "layer": other_tenant.root.pk}, format="json")
    finally:
        held.release()
    assert refused.status_code == 429, refused.content
    assert refused.json()["error"]["code"] == "overloaded" and int(refused["Retry-After"]) >= 1
    assert "machine" in refused.json()["error"]["message"]
    assert served.status_code == 200, served.content
    assert tenant.client.post("/api/v1/context/", body, format="json").status_code == 200
