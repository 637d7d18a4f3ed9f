"""Every page that runs a context with an agent profile leaves the profile's excluded items out, as the
API does: the preview, the profile page's "try it" (saved and unsaved settings alike), compare, the
console's replay and "why not?", and an experiment's run. All of them resolve the profile in
assembly's `resolve` and drop its items in one place (the gather pipeline's filters,
apps/assembly/sources/pipeline.py, trace reason `profile_excluded`)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.test import Client, override_settings

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.experiments.models import QuestionResult
from apps.experiments.questions import QuestionInput
from apps.experiments.run import experiment_execute
from apps.experiments.services import experiment_start, question_set_create
from apps.layers.models import Item, Layer
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, profile_create, profile_item_exclude
from apps.web.console.replay import record_replay
from apps.web.console.why_not import why_not
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People
from tests.web.profiles_data import LUNCH, QUERY, billing_layer

pytestmark = pytest.mark.django_db

ROOMY = 2000  # every chunk fits: only the exclusion leaves the lunch note out
LEFT_OUT = "left out: the agent profile excludes it"


@pytest.fixture
def layer(tenant: Tenant) -> Layer:
    return billing_layer(tenant)


@pytest.fixture
def lunch(layer: Layer) -> Item:
    return Item.objects.get(layer=layer, content=LUNCH)


@pytest.fixture
def coder(tenant: Tenant, lunch: Item) -> AgentProfile:
    """A profile that excludes the lunch note."""
    coder = profile_create(workspace=tenant.workspace, name="coder", data=ProfileInput(token_budget=ROOMY))
    return profile_item_exclude(profile=coder, item=lunch)


@pytest.fixture
def planner(tenant: Tenant) -> AgentProfile:
    return profile_create(workspace=tenant.workspace, name="planner", data=ProfileInput(token_budget=ROOMY))


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_the_preview_page_leaves_them_out(people: People, layer: Layer, lunch: Item, coder: AgentProfile) -> None:
    query = urlencode({"layer": layer.pk, "query": QUERY, "profile": "coder", "timeout_ms": 0})
    view = signed_in("vera").get(f"/preview/?{query}").context["view"]
    assert lunch.pk not in view.chunk_item_ids and view.profile_excluded_ids == {lunch.pk}


def test_try_it_leaves_them_out_with_the_saved_settings_and_with_the_unsaved_ones(
    people: People, layer: Layer, coder: AgentProfile
) -> None:
    form = {
        "name": "coder",
        "token_budget": str(ROOMY),
        "preferred_format": "markdown",
        "conversation_preset": "balanced",
        "ranking_function": "default",
        "safety_margin": "0.15",
        "context_position": "after_system",
        "weight_importance": "50",  # the lunch note would go first: it is still left out
        "try-layer": str(layer.pk),
        "try-query": QUERY,
    }
    response = signed_in("vera").post("/profiles/coder/try/", form)
    assert response.status_code == 200
    trial = response.context["trial"]
    assert LUNCH not in [row.excerpt for row in trial.a.rows] + [row.excerpt for row in trial.b.rows]
    assert len(trial.b.rows) == 3 and not trial.added and not trial.removed


def test_compare_leaves_them_out_of_the_side_whose_profile_excludes_them(
    people: People, layer: Layer, coder: AgentProfile, planner: AgentProfile
) -> None:
    query = urlencode({"other": "planner", "layer": layer.pk, "query": QUERY})
    comparison = signed_in("vera").get(f"/profiles/coder/compare/?{query}").context["comparison"]
    assert [change.row.excerpt for change in comparison.added] == [LUNCH] and not comparison.removed
    assert comparison.added[0].other_text.startswith(f"in A: {LEFT_OUT}")


@override_settings(ASSEMBLY_CACHE_SECONDS=0)
def test_a_replay_leaves_out_what_the_profile_excluded_since_and_why_not_says_so(
    tenant: Tenant, layer: Layer, lunch: Item, planner: AgentProfile
) -> None:
    params = ContextParams(layer_id=layer.pk, query=QUERY, profile="planner", timeout_ms=0)
    result = context_assemble(workspace=tenant.workspace, params=params)
    record = AssemblyRecord.objects.get(trace_id=result.trace_id)
    assert lunch.pk in [chunk.id for chunk in result.chunks]
    profile_item_exclude(profile=planner, item=lunch)

    replayed = record_replay(record=record)
    assert [row.id for row in replayed.removed] == [lunch.pk] and not replayed.added
    answer = why_not(record=record, source="item", candidate_id=lunch.pk)
    assert answer.now == LEFT_OUT and not answer.fits_pinned


def test_an_experiment_run_leaves_them_out_of_the_profiles_answers(
    tenant: Tenant, layer: Layer, lunch: Item, coder: AgentProfile, planner: AgentProfile
) -> None:
    Item.objects.filter(pk=lunch.pk).update(external_id="lunch")
    asked = [QuestionInput(question="When does the billing team have lunch?", expected=("lunch",))]
    question_set = question_set_create(workspace=tenant.workspace, name="lunch", questions=asked)
    run = experiment_start(
        workspace=tenant.workspace,
        question_set=question_set,
        layer=layer,
        profile_a="coder",
        profile_b="planner",
        token_budget=None,
    )
    experiment_execute(run_id=run.pk)
    assert sorted(QuestionResult.objects.filter(run=run).values_list("side", "recall")) == [("a", 0.0), ("b", 1.0)]
