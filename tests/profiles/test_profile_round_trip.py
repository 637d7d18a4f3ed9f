"""Profile round-trip: saving a valid profile then loading it gives it back."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.profiles.services import RANKING_WEIGHT_KEYS, ProfileInput
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

DEFAULTS: dict[str, Any] = vars(ProfileInput())
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
names = itertools.count()


def free_text(*, min_size: int, max_size: int) -> st.SearchStrategy[str]:
    """Text as the API stores it: UTF-8 without NUL (PostgreSQL refuses it) or surrounding whitespace (trimmed)."""
    text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=min_size, max_size=max_size)
    return text.map(str.strip).filter(lambda s: len(s) >= min_size)


weight = st.one_of(
    st.floats(min_value=0.0, allow_nan=False, allow_infinity=False),
    st.integers(min_value=0, max_value=10**6),
)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid configuration, each field present or left out (then it takes its default)."""
    window = draw(st.none() | st.integers(min_value=1, max_value=2_000_000))
    fields: dict[str, Any] = {
        "agent_type": free_text(min_size=0, max_size=100),
        "model": free_text(min_size=0, max_size=100),
        "context_window": st.just(window),
        "token_budget": st.none() | st.integers(min_value=1, max_value=window or 2_000_000),
        "retrieval_limit": st.none() | st.integers(min_value=1, max_value=1000),
        "preferred_format": st.sampled_from(["json", "markdown", "text"]),
        "type_filters": st.lists(free_text(min_size=1, max_size=32), max_size=50),
        "template": free_text(min_size=0, max_size=100),
        "conversation_preset": st.sampled_from(["aggressive", "balanced", "context_rich"]),
        "ranking_function": free_text(min_size=1, max_size=100),
        "ranking_weights": st.dictionaries(st.sampled_from(sorted(RANKING_WEIGHT_KEYS)), weight).map(
            lambda w: {k: (max(v, 0.01) if k == "recency_half_life_days" else v) for k, v in w.items()}
        ),
        "safety_margin": st.floats(min_value=0.0, max_value=0.9),
        "context_position": st.sampled_from(["after_system", "before_system"]),
    }
    return {key: draw(strategy) for key, strategy in fields.items() if draw(st.booleans())}


def unique_name(prefix: str) -> str:
    return f"{prefix}-{next(names)}"


def configuration(body: dict[str, Any]) -> dict[str, Any]:
    return {key: body[key] for key in DEFAULTS}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    prefix=st.text(NAME_CHARS, min_size=1, max_size=90),
    first=configs(),
    second=configs(),
)
def test_a_saved_profile_loads_back_equivalent(
    tenant: Tenant, prefix: str, first: dict[str, Any], second: dict[str, Any]
) -> None:
    name = unique_name(prefix)
    created = tenant.client.post("/api/v1/profiles/", {"name": name, **first}, format="json")
    assert created.status_code == 201, created.json()
    loaded = tenant.client.get(f"/api/v1/profiles/{name}/").json()
    assert loaded == created.json()
    assert loaded["name"] == name and configuration(loaded) == {**DEFAULTS, **first}

    replaced = tenant.client.put(f"/api/v1/profiles/{name}/", second, format="json")
    assert replaced.status_code == 200, replaced.json()
    loaded = tenant.client.get(f"/api/v1/profiles/{name}/").json()
    assert loaded == replaced.json()
    assert configuration(loaded) == {**DEFAULTS, **second}
