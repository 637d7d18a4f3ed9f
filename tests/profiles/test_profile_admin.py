"""The profile admin refuses what the profile service refuses, so a saved profile never breaks assembly."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.profiles.models import AgentProfile
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client: Client, django_user_model: type[AbstractUser]) -> Client:
    client.force_login(django_user_model.objects.create_superuser(username="root", password="x" * 12))
    return client


def form(tenant: Tenant, **changes: Any) -> dict[str, Any]:
    return {
        "workspace": tenant.workspace.pk,
        "name": "admin-made",
        "agent_type": "",
        "model": "",
        "context_window": "",
        "token_budget": "",
        "retrieval_limit": "",
        "preferred_format": "markdown",
        "type_filters": "",
        "template": "",
        "conversation_preset": "balanced",
        "ranking_function": "default",
        "ranking_weights": "",
        "safety_margin": "0.15",
        "context_position": "after_system",
        **changes,
    }


def test_it_saves_a_valid_profile_and_reads_cleared_json_boxes_as_empty(staff: Client, tenant: Tenant) -> None:
    response = staff.post("/admin/profiles/agentprofile/add/", form(tenant, token_budget="500"))
    assert response.status_code == 302
    profile = AgentProfile.objects.get(name="admin-made")
    assert profile.token_budget == 500 and profile.type_filters == [] and profile.ranking_weights == {}


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": "has space"}, "name"),
        ({"ranking_weights": '{"novelty": 1}'}, "ranking_weights"),
        ({"ranking_weights": '{"vector": "x"}'}, "ranking_weights"),
        ({"ranking_weights": "[1]"}, "ranking_weights"),
        ({"type_filters": '"spec"'}, "type_filters"),
        ({"type_filters": "[1]"}, "type_filters"),
        ({"context_window": "100", "token_budget": "200"}, "token_budget"),
        ({"safety_margin": "0.95"}, "safety_margin"),
    ],
)
def test_it_shows_a_form_error_instead_of_saving_a_broken_profile(
    staff: Client, tenant: Tenant, changes: dict[str, str], field: str
) -> None:
    response = staff.post("/admin/profiles/agentprofile/add/", form(tenant, **changes))
    assert response.status_code == 200
    assert field in response.context["adminform"].form.errors
    assert not AgentProfile.objects.exists()
