"""API rate limits: a burst of bad keys is stopped, a normal client is not; per key, per address."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from apps.core import cache
from apps.core.ratelimit import rate_blocked
from apps.workspaces.services import api_key_create
from tests.support.tenants import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_window")]

REDIS_URL = "redis://127.0.0.1:6379/8"
REDIS_COUNTERS = {
    "BACKEND": "django_redis.cache.RedisCache",
    "LOCATION": REDIS_URL,
    "KEY_PREFIX": "ca-rl",
    "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", "IGNORE_EXCEPTIONS": True},
}


def assert_rate_limited(response: object, *, within: int) -> None:
    assert response.status_code == 429  # type: ignore[attr-defined]
    assert response.json()["error"]["code"] == "rate_limited"  # type: ignore[attr-defined]
    wait = int(response["Retry-After"])  # type: ignore[index]
    assert 1 <= wait <= within and response.json()["error"]["details"] == {"retry_after": wait}  # type: ignore[attr-defined]


def test_it_stops_a_burst_of_bad_api_keys_from_one_address(tenant: Tenant, anon: APIClient) -> None:
    statuses = []
    for _ in range(300):
        anon.credentials(HTTP_AUTHORIZATION=f"Bearer ca_{secrets.token_urlsafe(32)}")
        statuses.append(anon.get("/api/v1/layers/").status_code)
    assert statuses[:60] == [401] * 60  # RATE_LIMIT_API_KEY_FAILURES = 60/60
    assert statuses[60:] == [429] * 240
    assert_rate_limited(anon.get("/api/v1/layers/"), within=60)
    # The address is blocked for the rest of the window, whatever key it sends; others are not.
    assert_rate_limited(tenant.client.get("/api/v1/layers/"), within=60)
    assert tenant.client.get("/api/v1/layers/", REMOTE_ADDR="10.0.0.7").status_code == 200


def test_without_redis_the_failures_are_counted_in_a_file_every_server_process_maps(anon: APIClient) -> None:
    store = Path(settings.CACHES["ratelimit-failures"]["LOCATION"])
    assert store.is_relative_to(Path(settings.VAR_DIR))
    assert rate_blocked(bucket="api-key-failures", ident="127.0.0.1", rate=(1, 60)) is None
    anon.credentials(HTTP_AUTHORIZATION="Bearer ca_wrong")
    assert anon.get("/api/v1/layers/").status_code == 401
    assert rate_blocked(bucket="api-key-failures", ident="127.0.0.1", rate=(1, 60)) is not None  # counted
    assert store.stat().st_size > 0


def test_it_never_throttles_a_normal_client(tenant: Tenant) -> None:
    statuses = {tenant.client.get("/api/v1/layers/").status_code for _ in range(300)}
    statuses |= {
        tenant.client.post("/api/v1/context/", {"layer": tenant.root.pk, "query": f"q{i}"}, format="json").status_code
        for i in range(50)
    }
    assert statuses == {200}


@override_settings(RATE_LIMIT_API_KEY=(5, 60))
def test_it_limits_each_key_on_its_own(tenant: Tenant) -> None:
    assert [tenant.client.get("/api/v1/status/").status_code for _ in range(5)] == [200] * 5
    assert_rate_limited(tenant.client.get("/api/v1/status/"), within=60)
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(workspace=tenant.workspace, name='b').secret}")
    assert other.get("/api/v1/status/").status_code == 200


@override_settings(RATE_LIMIT_API_ADDRESS=(5, 60))
def test_it_limits_each_client_address_across_keys(tenant: Tenant) -> None:
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key_create(workspace=tenant.workspace, name='b').secret}")
    assert [c.get("/api/v1/status/").status_code for c in [tenant.client, other] * 2 + [other]] == [200] * 5
    assert_rate_limited(tenant.client.get("/api/v1/status/"), within=60)
    assert tenant.client.get("/api/v1/status/", REMOTE_ADDR="10.0.0.8").status_code == 200


@override_settings(RATE_LIMIT_API_ADDRESS=(2, 60))
def test_it_trusts_x_forwarded_for_only_behind_configured_proxies(tenant: Tenant) -> None:
    spoofed = [tenant.client.get("/api/v1/status/", HTTP_X_FORWARDED_FOR=f"10.1.0.{i}") for i in range(3)]
    assert [r.status_code for r in spoofed] == [200, 200, 429]  # no proxy configured: the header is ignored
    with override_settings(RATE_LIMIT_TRUSTED_PROXIES=1):
        forwarded = [
            tenant.client.get("/api/v1/status/", HTTP_X_FORWARDED_FOR=f"6.6.6.6, 10.2.0.{i}") for i in range(3)
        ]
        assert [r.status_code for r in forwarded] == [200, 200, 200]  # one client address each


@pytest.fixture
def redis_counters() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    with override_settings(CACHES={"default": REDIS_COUNTERS | {"KEY_PREFIX": "ca"}, "ratelimit": REDIS_COUNTERS}):
        yield client
    client.flushdb()


@override_settings(RATE_LIMIT_API_KEY=(3, 60))
def test_it_keeps_the_counters_in_redis_when_configured(tenant: Tenant, redis_counters: redis.Redis) -> None:
    assert [tenant.client.get("/api/v1/status/").status_code for _ in range(4)] == [200, 200, 200, 429]
    keys = [key.decode() for key in redis_counters.keys("ca-rl:*")]
    assert any(":api-key:" in key for key in keys) and any(":api-address:" in key for key in keys)
    cache.counters_clear()  # what every other process would see too: the counters are gone
    assert redis_counters.keys("ca-rl:*") == []
    assert tenant.client.get("/api/v1/status/").status_code == 200


@override_settings(RATE_LIMIT_API_KEY=(3, 60))
def test_a_redis_outage_lets_requests_through(tenant: Tenant) -> None:
    down = REDIS_COUNTERS | {"LOCATION": "redis://127.0.0.1:1/0"}
    with override_settings(CACHES={"default": down | {"KEY_PREFIX": "ca"}, "ratelimit": down}):
        assert [tenant.client.get("/api/v1/status/").status_code for _ in range(5)] == [200] * 5
