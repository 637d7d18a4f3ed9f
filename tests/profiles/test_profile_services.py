"""The profile service: its defaults are the model's, and it guards callers that skip the API edge."""

from __future__ import annotations

from dataclasses import fields

import pytest

from apps.core.errors import Conflict, InvalidInput
from apps.profiles.models import AgentProfile
from apps.profiles.selectors import profile_get
from apps.profiles.services import ProfileInput, profile_create, profile_update
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_the_input_defaults_are_the_models_defaults() -> None:
    defaults = ProfileInput()
    for f in fields(ProfileInput):
        assert getattr(defaults, f.name) == AgentProfile._meta.get_field(f.name).get_default(), f.name


def test_it_round_trips_through_the_service_and_selector(tenant: Tenant) -> None:
    data = ProfileInput(model="gpt-4o", token_budget=10, type_filters=["spec"], ranking_weights={"vector": 2.0})
    profile_create(workspace=tenant.workspace, name="svc", data=data)
    loaded = profile_get(workspace=tenant.workspace, name="svc")
    assert ProfileInput(**{f.name: getattr(loaded, f.name) for f in fields(ProfileInput)}) == data


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (ProfileInput(type_filters="spec"), "invalid_type_filters"),  # type: ignore[arg-type]
        (ProfileInput(ranking_weights=[1.0]), "invalid_ranking_weights"),  # type: ignore[arg-type]
        (ProfileInput(ranking_weights={"vector": float("nan")}), "invalid_ranking_weights"),
        (ProfileInput(safety_margin=float("inf")), "invalid_safety_margin"),
        (ProfileInput(context_window=10, token_budget=11), "invalid_token_budget"),
        (ProfileInput(preferred_format="yaml"), "invalid_preferred_format"),
        (ProfileInput(context_position="middle"), "invalid_context_position"),
    ],
)
def test_it_refuses_what_assembly_could_not_use(tenant: Tenant, data: ProfileInput, code: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        profile_create(workspace=tenant.workspace, name="bad", data=data)
    assert raised.value.code == code


def test_a_rename_onto_a_taken_name_is_a_conflict_and_changes_nothing(tenant: Tenant) -> None:
    first = profile_create(workspace=tenant.workspace, name="first", data=ProfileInput(token_budget=1))
    profile_create(workspace=tenant.workspace, name="second", data=ProfileInput())
    with pytest.raises(Conflict):
        profile_update(profile=first, name="second", data=ProfileInput(token_budget=2))
    assert profile_get(workspace=tenant.workspace, name="first").token_budget == 1
