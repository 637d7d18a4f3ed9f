"""The shared counter table: atomic increments across processes, expiry, and a full neighbourhood."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest

from apps.core import shared_counters
from apps.core.shared_counters import SharedCounterCache


def _table(path: Path) -> SharedCounterCache:
    return SharedCounterCache(str(path), {})


def _count(path: str, times: int) -> None:
    counters = SharedCounterCache(path, {})
    for _ in range(times):
        try:
            counters.incr("hits")
        except ValueError:
            if not counters.add("hits", 1, 60):
                counters.incr("hits")


def test_increments_from_several_processes_are_never_lost(tmp_path: Path) -> None:
    path = str(tmp_path / "counters.bin")
    spawn = multiprocessing.get_context("spawn")
    workers = [spawn.Process(target=_count, args=(path, 400)) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    assert _table(tmp_path / "counters.bin").get("hits") == 1600


def test_an_entry_expires_and_its_slot_is_free_again(tmp_path: Path) -> None:
    counters = _table(tmp_path / "c.bin")
    assert counters.add("a", 1, 1) and not counters.add("a", 5, 1)
    assert counters.incr("a", 2) == 3
    time.sleep(1.1)
    assert counters.get("a") is None
    with pytest.raises(ValueError):
        counters.incr("a")
    assert counters.add("a", 7, 60) and counters.get("a") == 7


def test_deleting_a_key_keeps_the_keys_probed_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_counters, "SLOTS", 4)  # every key shares four slots
    monkeypatch.setattr(shared_counters, "PROBES", 4)
    shared_counters._tables.clear()
    counters = _table(tmp_path / "small.bin")
    for n, key in enumerate("abcd"):
        counters.set(key, n, 60)
    assert [counters.get(key) for key in "abcd"] == [0, 1, 2, 3]
    for key in "abcd"[:2]:
        assert counters.delete(key)
    assert [counters.get(key) for key in "abcd"] == [None, None, 2, 3]
    counters.set("e", 9, 5)  # a full table: the slot expiring first is reused
    counters.set("f", 8, 60)
    counters.set("g", 7, 60)
    assert counters.get("g") == 7 and counters.get("f") == 8
    shared_counters._tables.clear()


def test_it_stores_integers_only(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        _table(tmp_path / "c.bin").set("a", "text", 60)
