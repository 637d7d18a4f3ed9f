"""The assembly cache's answers: by reference and unchangeable in local memory, pickled through Redis."""

from __future__ import annotations

import time
import uuid
from dataclasses import FrozenInstanceError

import pytest
import redis
from django.test import override_settings

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.assembly.services.cache import CachedContext, cached_get, cached_put
from apps.core import cache
from apps.layers.services import ItemInput, items_create
from tests.support.tenants import Tenant

REDIS_URL = "redis://127.0.0.1:6379/12"


def _answer(tenant: Tenant, query: str = "backups") -> CachedContext:
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    params = ContextParams(layer_id=tenant.root.pk, query=query, token_budget=60, timeout_ms=0)
    result = context_assemble(workspace=tenant.workspace, params=params)
    return CachedContext(result, tenant.root.pk, {"session": "s", "group_id": "g", "agent_type": "", "iteration": 2})


@pytest.mark.django_db
def test_local_memory_hands_out_the_stored_answer_itself_and_nobody_can_change_it(tenant: Tenant) -> None:
    entry = _answer(tenant)
    key = f"ctx:test:{uuid.uuid4()}"
    cached_put(key, entry)
    got = cached_get(key)
    assert got is entry  # no pickling: the same frozen object
    with pytest.raises(FrozenInstanceError):
        got.result.context = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        got.scope["session"] = "changed"  # type: ignore[index]
    assert isinstance(got.result.chunks, tuple) and isinstance(got.result.warnings, tuple)


@pytest.mark.django_db
def test_a_hit_answers_from_the_stored_object_with_its_own_flags(tenant: Tenant) -> None:
    params = ContextParams(layer_id=tenant.root.pk, query="backups", token_budget=60, timeout_ms=0)
    items_create(layer=tenant.root, items=[ItemInput(kind="memory", type="fact", content="Backups are kept 35 days.")])
    first = context_assemble(workspace=tenant.workspace, params=params)
    again = context_assemble(workspace=tenant.workspace, params=params)
    assert again.cached and not first.cached  # the hit is a copy with its flags; the stored answer is untouched
    assert (again.context, again.chunks, again.trace_id) == (first.context, first.chunks, first.trace_id)
    assert context_assemble(workspace=tenant.workspace, params=params).cached


def test_local_objects_expire_and_keep_at_most_their_bound() -> None:
    objects = cache._Objects(max_entries=3)
    for n in range(5):
        objects.set(f"k{n}", n, 60)
    assert [objects.get(f"k{n}") for n in range(5)] == [None, None, 2, 3, 4]
    objects.get("k2")  # used: now the most recent
    objects.set("k5", 5, 60)
    assert objects.get("k3") is None and objects.get("k2") == 2
    objects.set("brief", 1, 0)
    time.sleep(0.01)
    assert objects.get("brief") is None


@pytest.mark.django_db
def test_with_redis_the_answer_is_pickled_and_equal(tenant: Tenant) -> None:
    entry = _answer(tenant, "backups kept")
    client = redis.Redis.from_url(REDIS_URL)
    redis_cache = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"ca-test-{uuid.uuid4().hex}",
        "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
    }
    key = f"ctx:test:{uuid.uuid4()}"
    with override_settings(CACHES={"default": redis_cache}):
        try:
            cached_put(key, entry)
            got = cached_get(key)
        finally:
            client.delete(*client.keys(f"{redis_cache['KEY_PREFIX']}:*") or [b"none"])
    assert got is not entry and got == entry  # another process would read it: pickled, equal
    assert dict(got.scope) == dict(entry.scope)
    with pytest.raises(TypeError):
        got.scope["session"] = "changed"  # type: ignore[index]
    assert cache.get_object(key) is None  # nothing went to this process's memory
