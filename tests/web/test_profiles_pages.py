"""The profile pages: weights as labelled numbers, every error at once (the service's own checks), roles,
"try it" with unsaved values, the side-by-side of two profiles, and names that must open."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pytest_django.fixtures import SettingsWrapper

from apps.assembly.models import AssemblyRecord
from apps.core.errors import InvalidInput
from apps.layers.models import Layer
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, check_name, profile_create
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People
from tests.web.profiles_data import BUDGET, LUNCH, QUERY, billing_layer

MaxQueries = Callable[[int], AbstractContextManager[Any]]


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
        "context_position": "before_system",
        "weight_recency": "2.5",
        **overrides,
    }


@pytest.fixture
def layer(tenant: Tenant) -> Layer:
    return billing_layer(tenant)


@pytest.fixture
def coder(tenant: Tenant) -> AgentProfile:
    return profile_create(workspace=tenant.workspace, name="coder", data=ProfileInput(token_budget=BUDGET))


@pytest.fixture
def planner(tenant: Tenant) -> AgentProfile:
    data = ProfileInput(token_budget=BUDGET, ranking_weights={"importance": 50})
    return profile_create(workspace=tenant.workspace, name="planner", data=data)


def trial(layer: Layer, **overrides: str) -> dict[str, str]:
    """The coder's settings as the page shows them, with the importance weight at 50, and a request."""
    values = form(token_budget=str(BUDGET), weight_recency="", weight_importance="50", agent_type="", model="")
    return {**values, "try-layer": str(layer.pk), "try-query": QUERY, **overrides}


def compare_url(on: Layer, **overrides: object) -> str:
    query = {"other": "planner", "layer": on.pk, "query": QUERY, **overrides}
    return f"/profiles/coder/compare/?{urlencode(query)}"


def test_it_creates_and_edits_a_profile_with_labelled_weights(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")
    page = client.get("/profiles/+new/").content.decode()
    assert 'name="weight_recency"' in page and 'name="weight_recency_half_life_days"' in page
    assert client.post("/profiles/+new/", form()).status_code == 302
    profile = AgentProfile.objects.get(workspace=tenant.workspace, name="coder")
    assert profile.ranking_weights == {"recency": 2.5} and profile.token_budget == 2000
    assert profile.context_position == "before_system" and 'name="context_position"' in page
    assert client.post("/profiles/coder/", form(weight_recency="", weight_focus="4")).status_code == 302
    profile.refresh_from_db()
    assert profile.ranking_weights == {"focus": 4.0}
    assert 'name="weight_pinned"' not in page  # the engine reads no such weight
    assert b"coder" in signed_in("vera").get("/profiles/").content


def test_its_weight_fields_show_the_engines_defaults(people: People, tenant: Tenant) -> None:
    page = signed_in("otto").get("/profiles/+new/").content.decode()
    field = re.search(r'<input[^>]*name="weight_relevance"[^>]*>', page)
    assert field is not None and 'placeholder="0.8"' in field.group(0)
    assert "(default 0.8)" in page


def test_its_model_field_offers_the_model_catalogue(people: People, tenant: Tenant) -> None:
    page = signed_in("otto").get("/profiles/+new/").content.decode()
    field = re.search(r'<input[^>]*name="model"[^>]*>', page)
    assert field is not None and 'list="id_model-models"' in field.group(0)
    listed = re.search(r'<datalist id="id_model-models">(.*?)</datalist>', page, re.S)
    assert listed is not None
    for name in ("gpt-4o", "llama-3.1", "qwen3", "mistral-nemo", "gpt-oss", "claude", "gemini"):
        assert f'value="{name}"' in listed.group(1)
    assert "Meta, 131,072 tokens, exact" in listed.group(1)
    assert "Anthropic, 200,000 tokens, estimated" in listed.group(1)


def test_it_shows_every_profile_error_at_once(people: People, tenant: Tenant) -> None:
    response = signed_in("otto").post(
        "/profiles/+new/",
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


def test_it_lets_a_viewer_try_values_but_not_save_them(people: People, tenant: Tenant) -> None:
    profile_create(workspace=tenant.workspace, name="qa", data=ProfileInput(token_budget=1000))
    client = signed_in("vera")
    page = client.get("/profiles/qa/")
    assert page.status_code == 200 and b"Try it" in page.content and b"Save profile" not in page.content
    assert client.post("/profiles/qa/", form(name="qa", token_budget="5")).status_code == 403
    assert client.post("/profiles/qa/delete/").status_code == 403
    assert client.get("/profiles/+new/").status_code == 403
    assert AgentProfile.objects.get(workspace=tenant.workspace, name="qa").token_budget == 1000


def test_it_never_shows_a_profile_of_another_workspace(people: People, other_tenant: Tenant) -> None:
    profile_create(workspace=other_tenant.workspace, name="theirs", data=ProfileInput())
    assert signed_in("otto").get("/profiles/theirs/").status_code == 404
    assert signed_in("otto").post("/profiles/theirs/delete/").status_code == 404


def test_try_it_previews_the_unsaved_values_beside_the_saved_ones_and_saves_nothing(
    people: People, tenant: Tenant, layer: Layer, coder: AgentProfile, max_statements: MaxQueries
) -> None:
    client = signed_in("vera")  # a viewer: trying saves nothing
    with max_statements(26):  # each side reads the stored profile once, for the items it excludes
        response = client.post("/profiles/coder/try/", trial(layer))
    assert response.status_code == 200
    result = response.context["trial"]
    assert [change.row.excerpt for change in result.added] == [LUNCH]
    assert len(result.removed) == 1 and result.diff.kept == 1
    # Each side says what the other did with its chunk: A had the lunch note as a candidate and left it out.
    assert result.added[0].other is not None and not result.added[0].other.included
    assert result.added[0].other_text.startswith("in A: left out: ")
    assert result.removed[0].other_text.startswith("in B: left out: ")
    assert LUNCH not in [row.excerpt for row in result.a.rows] and result.b.rows[0].excerpt == LUNCH
    assert result.a.result.total_tokens <= BUDGET and result.b.result.total_tokens <= BUDGET
    html = response.content.decode()
    assert "<html" in html and "1 added, 1 removed" in html
    coder.refresh_from_db()
    assert coder.ranking_weights == {} and not AssemblyRecord.objects.exists()


def test_try_it_over_htmx_gives_back_the_form_with_the_result(
    people: People, tenant: Tenant, layer: Layer, coder: AgentProfile
) -> None:
    response = signed_in("otto").post("/profiles/coder/try/", trial(layer), HTTP_HX_REQUEST="true")
    html = response.content.decode().strip()
    assert response.status_code == 200 and html.startswith('<form method="post" class="card" id="profile-form"')
    assert "<html" not in html and LUNCH in html and 'name="weight_importance" value="50"' in html


def test_try_it_shows_the_settings_errors_beside_their_fields(
    people: People, tenant: Tenant, layer: Layer, coder: AgentProfile
) -> None:
    client = signed_in("otto")
    response = client.post("/profiles/coder/try/", trial(layer, weight_importance="-1", token_budget="0"))
    assert response.status_code == 422
    assert set(response.context["form"].errors) == {"weight_importance", "token_budget"}
    assert "Not tried: 2 fields to correct" in response.content.decode() and response.context["trial"] is None
    response = client.post("/profiles/coder/try/", trial(layer, **{"try-query": " "}))
    assert response.status_code == 422 and set(response.context["try_form"].errors) == {"query"}
    response = client.post("/profiles/coder/try/", trial(layer, **{"try-token_budget": "0"}))
    assert response.status_code == 422 and set(response.context["try_form"].errors) == {"token_budget"}
    assert "invalid_token_budget" in str(response.context["try_form"].errors["token_budget"])  # resolve.py's check


def test_compare_shows_both_answers_and_what_the_other_profile_adds_and_removes(
    people: People,
    tenant: Tenant,
    layer: Layer,
    coder: AgentProfile,
    planner: AgentProfile,
    max_statements: MaxQueries,
) -> None:
    client = signed_in("vera")
    # Two assemblies (each: profile, searches, rows, and its record's insert, inline in a test
    # transaction), two reads of chunk texts, the page's forms and layout, not one per chunk.
    with max_statements(40):
        response = client.get(compare_url(layer))
    assert response.status_code == 200
    comparison = response.context["comparison"]
    assert (comparison.a.label, comparison.b.label) == ("coder", "planner")
    assert [change.row.excerpt for change in comparison.added] == [LUNCH] and len(comparison.removed) == 1
    assert comparison.diff.token_difference == comparison.b.result.total_tokens - comparison.a.result.total_tokens
    html = response.content.decode()
    assert "<html" in html and "<strong>B</strong> (planner) against <strong>A</strong> (coder)" in html
    assert f'id="compare-query">\n{QUERY}</textarea>' in html  # the form keeps the request
    records = AssemblyRecord.objects.filter(workspace=tenant.workspace)
    assert sorted(records.values_list("request__profile", flat=True)) == ["coder", "planner"]

    fragment = client.get(compare_url(layer), HTTP_HX_REQUEST="true").content.decode().strip()
    assert fragment.startswith('<div id="compare-result"') and "<form" not in fragment and LUNCH in fragment


def test_compare_refuses_a_bad_request_as_form_errors(
    people: People, tenant: Tenant, layer: Layer, coder: AgentProfile, planner: AgentProfile
) -> None:
    client = signed_in("vera")
    response = client.get(compare_url(layer, query="", layer="999999"))
    assert response.status_code == 422 and set(response.context["compare_form"].errors) == {"layer", "query"}
    response = client.get(compare_url(layer, token_budget="0"), HTTP_HX_REQUEST="true")
    assert response.status_code == 422 and b"invalid_token_budget" in response.content
    assert client.get(compare_url(layer, other="coder")).status_code == 422  # not itself
    assert not AssemblyRecord.objects.exists()


def test_try_it_and_compare_never_reach_another_workspaces_profile(
    people: People, tenant: Tenant, other_tenant: Tenant, layer: Layer, coder: AgentProfile
) -> None:
    profile_create(workspace=other_tenant.workspace, name="theirs", data=ProfileInput())
    client = signed_in("otto")
    assert client.post("/profiles/theirs/try/", trial(layer, name="theirs")).status_code == 404
    assert client.get(compare_url(layer).replace("/coder/", "/theirs/").replace("planner", "coder")).status_code == 404
    assert client.get(compare_url(layer, other="theirs")).status_code == 404
    assert not AssemblyRecord.objects.exists()


def test_a_profile_named_new_opens_at_its_own_address(people: People, tenant: Tenant) -> None:
    client = signed_in("otto")
    assert client.get("/profiles/new/").headers["Location"] == "/profiles/+new/"  # the old creation address
    assert client.post("/profiles/+new/", form(name="new")).headers["Location"] == "/profiles/new/"
    page = client.get("/profiles/new/")
    assert page.status_code == 200 and page.context["profile"].name == "new"
    assert client.post("/profiles/new/", form(name="new", token_budget="900")).status_code == 302
    assert AgentProfile.objects.get(workspace=tenant.workspace, name="new").token_budget == 900
    assert client.get("/profiles/+new/").context["profile"] is None


@pytest.mark.parametrize("name", ["...", "-", "_", "a.b_c-D9", "x" * 100])
def test_every_name_the_validator_allows_opens_in_the_url(people: People, tenant: Tenant, name: str) -> None:
    check_name(name)
    profile_create(workspace=tenant.workspace, name=name, data=ProfileInput())
    url = reverse("web:profile", args=[name])
    assert url == f"/profiles/{name}/"
    page = signed_in("vera").get(url)
    assert page.status_code == 200 and page.context["profile"].name == name


@pytest.mark.parametrize("name", ["a b", "café", "a/b", "+new", "a%2Fb", "", ".", "..", "x" * 101, "名前"])
def test_names_that_would_not_make_one_clean_path_segment_are_refused(
    people: People, tenant: Tenant, name: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        check_name(name)
    assert refused.value.code == "invalid_name"
    response = signed_in("otto").post("/profiles/+new/", form(name=name))
    assert response.status_code == 422 and "name" in response.context["form"].errors
    refused_by_api = tenant.client.post("/api/v1/profiles/", {"name": name}, format="json")
    assert refused_by_api.status_code == 400 and refused_by_api.json()["error"]["code"] == "invalid_name"
    assert not AgentProfile.objects.filter(workspace=tenant.workspace).exists()


def test_every_help_text_is_the_one_its_field_names_in_aria_describedby(people: People, coder: AgentProfile) -> None:
    html = signed_in("otto").get("/profiles/coder/").content.decode()
    described = set(re.findall(r'aria-describedby="([^"]+)"', html))
    assert "id_try-token_budget_helptext" in described
    for ref in described:
        assert f'id="{ref}"' in html, ref


def test_a_new_profile_can_be_tried_against_the_defaults_before_it_exists(
    people: People, tenant: Tenant, layer: Layer
) -> None:
    client = signed_in("otto")
    assert b'hx-post="/profiles/+new/try/"' in client.get("/profiles/+new/").content
    response = client.post("/profiles/+new/try/", trial(layer, name="planner"))
    assert response.status_code == 200
    result = response.context["trial"]
    # The defaults at the new profile's own budget: the difference is its settings, not its room.
    assert result.a.label == "defaults" and result.a.result.token_budget == BUDGET
    assert result.b.rows[0].excerpt == LUNCH and result.b.result.token_budget == BUDGET
    assert abs(result.diff.token_difference) < BUDGET and len(result.removed) == len(result.added) == 1
    assert "against <strong>A</strong> (the defaults at this budget)" in response.content.decode()
    assert not AgentProfile.objects.exists() and not AssemblyRecord.objects.exists()
    assert client.post("/profiles/+new/try/", trial(layer, name="bad name")).status_code == 422
    assert signed_in("vera").post("/profiles/+new/try/", trial(layer)).status_code == 403


def test_compare_reads_the_chunk_texts_in_a_fixed_number_of_queries(
    people: People,
    tenant: Tenant,
    layer: Layer,
    coder: AgentProfile,
    planner: AgentProfile,
    django_assert_max_num_queries: MaxQueries,
    settings: SettingsWrapper,
) -> None:
    # No deadline: a run that passes it skips searches and reads fewer rows, so a loaded machine made
    # the first count smaller than the second (a full run at load ~16 failed it).
    settings.ASSEMBLY_TIMEOUT_MS = 0
    client = signed_in("vera")
    client.get(compare_url(layer))  # warm the per-process layer snapshot
    with CaptureQueriesContext(connection) as tight:
        client.get(compare_url(layer))
    with django_assert_max_num_queries(len(tight)):
        response = client.get(compare_url(layer, token_budget=2000))  # every chunk fits on both sides
    assert len(response.context["comparison"].a.rows) == 4
