"""An erasure drops the workspace's cached contexts, under any content version, in local memory and in
Redis, and leaves other workspaces' alone."""

from __future__ import annotations

import uuid

import pytest
import redis
from django.test import override_settings

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.assembly.services.cache import CachedContext, cache_key, cached_drop, cached_get, cached_put
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

REDIS_URL = "redis://127.0.0.1:6379/12"


def entries(tenant: Tenant, other: Tenant) -> dict[str, CachedContext]:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    params = ContextParams(layer_id=tenant.root.pk, query="backups", token_budget=60, timeout_ms=0)
    result = context_assemble(workspace=tenant.workspace, params=params)
    entry = CachedContext(result, tenant.root.pk, {"session": "", "group_id": "", "agent_type": "", "iteration": None})
    mine = cache_key(workspace_id=tenant.workspace.pk, params=params)
    older = mine.rsplit(":", 1)[0] + ":" + uuid.uuid4().hex  # an entry of an older content version
    theirs = cache_key(workspace_id=other.workspace.pk, params=params)
    return {mine: entry, older: entry, theirs: entry}


def check(tenant: Tenant, other: Tenant) -> None:
    stored = entries(tenant, other)
    for key, entry in stored.items():
        cached_put(key, entry)
    assert all(cached_get(key) is not None for key in stored)
    assert cached_drop(workspace_id=tenant.workspace.pk) == 2
    mine, older, theirs = stored
    assert cached_get(mine) is None and cached_get(older) is None
    assert cached_get(theirs) is not None


def test_local_memory_drops_the_workspaces_cached_contexts(tenant: Tenant, other_tenant: Tenant) -> None:
    check(tenant, other_tenant)


def test_redis_drops_the_workspaces_cached_contexts(tenant: Tenant, other_tenant: Tenant) -> None:
    prefix = f"ca-test-{uuid.uuid4().hex}"
    redis_cache = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": prefix,
        "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
    }
    client = redis.Redis.from_url(REDIS_URL)
    with override_settings(CACHES={"default": redis_cache}):
        try:
            check(tenant, other_tenant)
        finally:
            client.delete(*client.keys(f"{prefix}:*") or [b"none"])
