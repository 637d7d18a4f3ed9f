"""Background work: items are embedded after commit without blocking the request; Redis-backed cache."""

from __future__ import annotations

import time

import pytest
import redis
from django.test import override_settings

from apps.core import background, cache, embeddings
from apps.layers.models import Item
from tests.support.tenants import make_tenant
from tests.support.waiting import wait_until

REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.mark.django_db(transaction=True)
def test_items_are_embedded_in_the_background_after_commit() -> None:
    t = make_tenant("bg")
    response = t.client.post(
        "/api/v1/items/bulk/",
        {
            "layer": t.root.pk,
            "items": [{"kind": "memory", "type": "fact", "content": f"Fact number {i}."} for i in range(30)],
        },
        format="json",
    )
    assert response.status_code == 201
    assert background.wait_idle(120)
    status = t.client.get("/api/v1/status/").json()
    assert status["items"] == 30 and status["items_pending_embedding"] == 0
    assert status["background"] == {"mode": "inprocess", "queue_depth": 0}
    assert not Item.objects.filter(embedding__isnull=True).exists()
    assert all(m.startswith("local:") for m in Item.objects.values_list("embedding_model", flat=True))


@pytest.mark.django_db
def test_nothing_is_dispatched_for_a_rolled_back_write(django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    t = make_tenant("rb")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        t.client.post(
            "/api/v1/items/bulk/",
            {
                "layer": t.root.pk,
                "items": [{"kind": "memory", "type": "fact", "content": "ok"}, {"kind": "bogus", "content": "x"}],
            },
            format="json",
        )
    assert callbacks == []


def test_the_query_cache_works_on_the_real_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    redis_cache = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
        }
    }
    with override_settings(CACHES=redis_cache):  # Django swaps the cache handler on this setting
        text = f"redis cached query {time.time()}"
        _, hit1 = embeddings.embed_query(text)
        _, hit2 = embeddings.embed_query(text)
        assert (hit1, hit2) == (False, True)
        assert client.dbsize() == 1
        cache.set_bytes("probe", b"\x00\x01", 60)
        assert cache.get_bytes("probe") == b"\x00\x01"
    client.flushdb()


def test_a_broken_cache_behaves_as_an_empty_one() -> None:
    dead = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", "SOCKET_CONNECT_TIMEOUT": 0.5},
        }
    }
    with override_settings(CACHES=dead):
        assert cache.get_bytes("anything") is None
        cache.set_bytes("anything", b"x", 10)
        _, hit = embeddings.embed_query("works without a cache")
        assert hit is False


def test_a_sweep_already_queued_is_not_queued_again() -> None:
    import threading

    release, runs = threading.Event(), []

    class Blocker:
        name = "tests.blocker"

        def run(self) -> None:
            release.wait(10)

    class Sweep:
        name = "tests.sweep"

        def run(self, scope: object) -> None:
            runs.append(scope)

    background.dispatch(Blocker())  # holds the worker thread while the sweeps queue up
    for _ in range(50):
        background.dispatch(Sweep(), None)
    background.dispatch(Sweep(), 7)
    release.set()
    assert background.wait_idle(10)
    assert runs == [None, 7]


def test_a_delayed_dispatch_runs_once_for_many_asks_and_wait_idle_does_not_wait_it_out() -> None:
    runs: list[object] = []

    class Flush:
        name = "tests.flush"

        def run(self) -> None:
            runs.append(None)

    started = time.monotonic()
    for _ in range(20):
        background.dispatch_later(Flush(), 60)
    assert runs == []  # not before its delay
    assert background.wait_idle(10)
    assert runs == [None] and time.monotonic() - started < 30
    background.dispatch_later(Flush(), 0.05)  # and on its own once the delay has passed
    wait_until(lambda: len(runs) >= 2, timeout=10, interval=0.02, what="the delayed run")
    assert background.wait_idle(10) and runs == [None, None]
