"""The profile pages: weights as labelled numbers, every error at once (the service's own checks), roles."""

from __future__ import annotations

from django.test import Client

from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create
from tests.conftest import Tenant
from tests.web.conftest import People
from tests.web.harness import PASSWORD


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def form(**overrides: str) -> dict[str, str]:
    return {
        "name": "coder",
        "agent_type": "developer",
        "model": "gpt-4o",
        "token_budget": "2000",
        "preferred_format": "markdown",
        "conversation_preset": "balanced",
        "ranking_function": "default",
        "safety_margin": "0.15",
        "weight_recency": "2.5",
        **overrides,
    }


def test_it_creates_and_edits_a_profile_with_labelled_weights(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")
    page = client.get("/profiles/new/").content.decode()
    assert 'name="weight_recency"' in page and 'name="weight_recency_half_life_days"' in page
    assert client.post("/profiles/new/", form()).status_code == 302
    profile = AgentProfile.objects.get(workspace=tenant.workspace, name="coder")
    assert profile.ranking_weights == {"recency": 2.5} and profile.token_budget == 2000
    assert client.post("/profiles/coder/", form(weight_recency="", weight_pinned="4")).status_code == 302
    profile.refresh_from_db()
    assert profile.ranking_weights == {"pinned": 4.0}
    assert b"coder" in signed_in("vera").get("/profiles/").content


def test_it_shows_every_profile_error_at_once(people: People, tenant: Tenant) -> None:
    response = signed_in("otto").post(
        "/profiles/new/",
        form(name="bad name", token_budget="0", weight_recency="-1", retrieval_limit="0", safety_margin="2"),
    )
    assert response.status_code == 422
    assert set(response.context["form"].errors) == {
        "name",
        "token_budget",
        "weight_recency",
        "retrieval_limit",
        "safety_margin",
    }
    assert not AgentProfile.objects.filter(workspace=tenant.workspace).exists()


def test_it_lets_a_viewer_read_but_not_change_a_profile(people: People, tenant: Tenant) -> None:
    profile_create(workspace=tenant.workspace, name="qa", data=ProfileInput(token_budget=1000))
    client = signed_in("vera")
    page = client.get("/profiles/qa/")
    assert page.status_code == 200 and b"disabled" in page.content and b"Save profile" not in page.content
    assert client.post("/profiles/qa/", form(name="qa", token_budget="5")).status_code == 403
    assert client.post("/profiles/qa/delete/").status_code == 403
    assert client.get("/profiles/new/").status_code == 403
    assert AgentProfile.objects.get(workspace=tenant.workspace, name="qa").token_budget == 1000


def test_it_never_shows_a_profile_of_another_workspace(people: People, other_tenant: Tenant) -> None:
    profile_create(workspace=other_tenant.workspace, name="theirs", data=ProfileInput())
    assert signed_in("otto").get("/profiles/theirs/").status_code == 404
    assert signed_in("otto").post("/profiles/theirs/delete/").status_code == 404
