"""Summaries in the real Redis: write-through, miss → PostgreSQL → repopulate, outage → PostgreSQL."""

from __future__ import annotations

import pickle
from collections.abc import Iterator

import pytest
import redis
from django.test import override_settings

from apps.metrics.registry import CACHE_HITS, CACHE_MISSES
from apps.summaries import caching
from apps.summaries.selectors import layer_summaries_get
from apps.summaries.services import layer_summarize
from tests.summaries.helpers import TEAM_FACTS, facts, tree
from tests.support.processes import free_port
from tests.support.tenants import Tenant

REDIS_URL = "redis://127.0.0.1:6379/11"


def _caches(url: str) -> dict[str, dict[str, object]]:
    return {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": "ca",
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", "SOCKET_CONNECT_TIMEOUT": 0.5},
        }
    }


@pytest.fixture
def real_redis() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    with override_settings(CACHES=_caches(REDIS_URL)):
        yield client
    client.flushdb()


def _redis_key(layer_id: int) -> str:
    return f"ca:1:{caching.key(layer_id, None)}"


def test_generation_writes_through_to_redis_with_a_ttl(tenant: Tenant, real_redis: redis.Redis) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    layer_summarize(layer=t.team)
    raw = real_redis.get(_redis_key(t.team.pk))
    assert raw is not None
    cached = pickle.loads(raw)
    assert {row["depth"] for row in cached} == {"sentence", "paragraph", "detailed"}
    assert 0 < real_redis.ttl(_redis_key(t.team.pk)) <= 3600


def test_a_miss_falls_back_to_postgresql_and_repopulates_the_cache(tenant: Tenant, real_redis: redis.Redis) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    layer_summarize(layer=t.team)
    real_redis.delete(_redis_key(t.team.pk))
    hits, misses = CACHE_HITS._value.get(), CACHE_MISSES._value.get()
    first = layer_summaries_get(layer_id=t.team.pk)
    assert CACHE_MISSES._value.get() == misses + 1 and CACHE_HITS._value.get() == hits
    assert real_redis.exists(_redis_key(t.team.pk))  # repopulated
    second = layer_summaries_get(layer_id=t.team.pk)
    assert CACHE_HITS._value.get() == hits + 1
    assert first == second and [r["depth"] for r in first] == ["sentence", "paragraph", "detailed"]


def test_the_cache_never_serves_a_summary_postgresql_no_longer_has(tenant: Tenant, real_redis: redis.Redis) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    layer_summarize(layer=t.team)
    assert layer_summaries_get(layer_id=t.team.pk)
    t.team.summaries.filter(depth="detailed").delete()  # a delete refreshes the entry (signals)
    assert [r["depth"] for r in layer_summaries_get(layer_id=t.team.pk)] == ["sentence", "paragraph"]


def test_a_redis_outage_reads_from_postgresql(tenant: Tenant, real_redis: redis.Redis) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    layer_summarize(layer=t.team)
    with override_settings(CACHES=_caches(f"redis://127.0.0.1:{free_port()}/0")):  # nothing listens there
        misses = CACHE_MISSES._value.get()
        rows = layer_summaries_get(layer_id=t.team.pk)
        assert len(rows) == 3 and CACHE_MISSES._value.get() == misses + 1
        assert layer_summarize(layer=t.team, force=True).status == "generated"  # writes survive it too
