"""The experiments pages: uploading a question set (every bad line a clear form error, never a 500),
a run of it with two profiles (figures side by side and per question, page runs), and who may do what:
operators upload and run, viewers read, another workspace's members get a 404."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import AbstractUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from apps.assembly.models import AssemblyRecord, RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, records_flush
from apps.assembly.services.consumption import record_consumption_claim
from apps.experiments.models import ExperimentRun, QuestionResult, QuestionSet
from apps.experiments.run import experiment_execute
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.profiles.services import ProfileInput, profile_create
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

FACTS = {
    "car": "Evan drives a new Prius he bought last spring.",
    "dog": "Sam's dog is a beagle named Biscuit.",
    "lake": "They went kayaking on Lake Tahoe in August.",
}
QUESTIONS = [
    {"question": "What car does Evan drive?", "expected": ["car"]},
    {"question": "What is the name of Sam's dog?", "expected": ["dog"]},
    {"question": "Where did they go kayaking?", "expected": ["lake"]},
]


@pytest.fixture
def chat(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="session", name="Chat", parent=tenant.root, external_id="c")
    items_create(
        layer=layer,
        items=[ItemInput(kind="memory", type="fact", content=text, external_id=key) for key, text in FACTS.items()],
    )
    profile_create(workspace=tenant.workspace, name="starved", data=ProfileInput(token_budget=1))
    profile_create(workspace=tenant.workspace, name="roomy", data=ProfileInput(token_budget=2000))
    return layer


MemberClient = Callable[[str, Tenant], Client]


@pytest.fixture
def member(django_user_model: type[AbstractUser]) -> MemberClient:
    def make(role: str, tenant: Tenant) -> Client:
        user = django_user_model.objects.create_user(username=f"{role}-{tenant.workspace.slug}", password="x" * 12)
        Membership.objects.create(workspace=tenant.workspace, user=user, role=role)
        client = Client()
        client.force_login(user)
        return client

    return make


def upload(client: Client, data: bytes, name: str = "car questions") -> tuple[int, str]:
    response = client.post(
        "/experiments/sets/", {"name": name, "file": SimpleUploadedFile("q.jsonl", data, "application/jsonl")}
    )
    return response.status_code, response.content.decode()


def jsonl(*rows: object) -> bytes:
    return "\n".join(row if isinstance(row, str) else json.dumps(row) for row in rows).encode()


def test_it_saves_a_set_and_shows_its_questions(chat: Layer, tenant: Tenant, member: MemberClient) -> None:
    operator = member(Role.OPERATOR, tenant)
    status, _body = upload(operator, jsonl(*QUESTIONS))
    assert status == 302
    saved = QuestionSet.objects.get(workspace=tenant.workspace, name="car questions")
    assert [q.expected for q in saved.questions.all()] == [["car"], ["dog"], ["lake"]]
    page = operator.get(f"/experiments/sets/{saved.pk}/").content.decode()
    assert "What is the name of Sam&#x27;s dog?" in page and "<code>lake</code>" in page


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (jsonl(QUESTIONS[0], "{oops"), "line 2: not valid JSON"),
        (jsonl({"question": "no ids"}), "line 1: &quot;expected&quot; must be a non-empty list"),
        (jsonl({"question": "Which?", "expected": ["car", "nowhere"]}), "(expected_unknown)"),
        (jsonl("[1, 2]"), "(not_an_object)"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"\n\n", "(empty)"),
        (b"", "The file is empty."),
    ],
)
def test_it_refuses_a_bad_file_with_the_reason_beside_it(
    chat: Layer, tenant: Tenant, member: MemberClient, data: bytes, said: str
) -> None:
    status, body = upload(member(Role.OPERATOR, tenant), data)
    assert status == 422
    assert said in body and "Nothing was saved" in body
    assert not QuestionSet.objects.exists()


def test_it_refuses_a_name_in_use_and_a_missing_file(chat: Layer, tenant: Tenant, member: MemberClient) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    status, body = upload(operator, jsonl(*QUESTIONS))
    assert status == 422 and "(duplicate_question_set)" in body
    response = operator.post("/experiments/sets/", {"name": "no file"})
    assert response.status_code == 422 and "Choose a file." in response.content.decode()


def start(client: Client, tenant: Tenant, chat: Layer, **fields: object) -> ExperimentRun:
    question_set = QuestionSet.objects.get(workspace=tenant.workspace)
    data = {"question_set": question_set.pk, "layer": chat.pk, "profile_a": "starved", "profile_b": "roomy"}
    response = client.post("/experiments/runs/", {**data, **fields})
    assert response.status_code == 302, response.content.decode()[:2000]
    run = ExperimentRun.objects.filter(workspace=tenant.workspace).latest("pk")
    assert response["Location"] == f"/experiments/runs/{run.pk}/"
    return run


def test_a_run_shows_both_profiles_side_by_side_and_per_question(
    chat: Layer, tenant: Tenant, member: MemberClient, django_capture_on_commit_callbacks: Callable[..., object]
) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    with django_capture_on_commit_callbacks(execute=False) as queued:  # type: ignore[attr-defined]
        run = start(operator, tenant, chat)
    assert len(queued) == 1  # the background task, dispatched once the run is committed
    polling = operator.get(f"/experiments/runs/{run.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert 'hx-trigger="every 1s"' in polling and "<html" not in polling and "0 of 3 questions" in polling

    assert experiment_execute(run_id=run.pk) == ExperimentRun.State.DONE
    assert experiment_execute(run_id=run.pk) == ExperimentRun.State.DONE  # a second dispatch does nothing
    results = QuestionResult.objects.filter(run=run)
    assert sorted((r.side, r.recall) for r in results) == [("a", 0.0)] * 3 + [("b", 1.0)] * 3
    assert {r.tokens for r in results if r.side == "a"} == {0}
    records_flush()
    records = AssemblyRecord.objects.filter(workspace=tenant.workspace)
    assert records.count() == 6 and set(records.values_list("origin", flat=True)) == {RecordOrigin.PAGE}

    done = operator.get(f"/experiments/runs/{run.pk}/", headers={"HX-Request": "true"}).content.decode()
    assert "hx-trigger" not in done and "Done: 3 questions" in done
    page = operator.get(f"/experiments/runs/{run.pk}/").content.decode()
    assert '<td class="num recall-a">0.000</td>' in page and '<td class="num recall-b">1.000</td>' in page
    assert "A: <code>car</code>" in page and "Run again" in page
    listed = operator.get("/experiments/").content.decode()
    assert f"/experiments/runs/{run.pk}/" in listed and "0.000 / 1.000" in listed
    chart = operator.get(f"/experiments/sets/{run.question_set_id}/").content.decode()
    assert 'id="experiments-recall-data"' in chart and '"label": "roomy"' in chart


def test_a_budget_for_both_overrides_the_profiles_and_must_be_valid(
    chat: Layer, tenant: Tenant, member: MemberClient
) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    question_set = QuestionSet.objects.get()
    for fields, said in [
        ({"token_budget": "0"}, "A budget is 1 to"),
        ({"profile_b": "starved"}, "Choose a profile other than A"),
        ({"layer": "999999"}, "Select a valid choice"),
        ({"profile_a": "ghost"}, "Select a valid choice"),
    ]:
        data = {"question_set": question_set.pk, "layer": chat.pk, "profile_a": "starved", "profile_b": "roomy"}
        response = operator.post("/experiments/runs/", {**data, **fields})
        assert response.status_code == 422 and said in response.content.decode()
    assert not ExperimentRun.objects.exists()
    run = start(operator, tenant, chat, token_budget="2000", profile_a="")
    experiment_execute(run_id=run.pk)
    assert set(QuestionResult.objects.filter(run=run).values_list("recall", flat=True)) == {1.0}


def test_viewers_read_and_operators_run(
    chat: Layer, tenant: Tenant, other_tenant: Tenant, member: MemberClient
) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    run = start(operator, tenant, chat)
    experiment_execute(run_id=run.pk)
    viewer = member(Role.VIEWER, tenant)
    listed = viewer.get("/experiments/").content.decode()
    assert "Operators and admins upload question sets" in listed and 'id="upload-form"' not in listed
    assert viewer.get(f"/experiments/runs/{run.pk}/").status_code == 200
    assert upload(viewer, jsonl(*QUESTIONS), name="mine")[0] == 403
    assert viewer.post("/experiments/runs/", {"question_set": run.question_set_id}).status_code == 403
    assert viewer.post(f"/experiments/runs/{run.pk}/again/").status_code == 403

    outsider = member(Role.VIEWER, other_tenant)
    assert outsider.get(f"/experiments/runs/{run.pk}/").status_code == 404
    assert outsider.get(f"/experiments/sets/{run.question_set_id}/").status_code == 404
    assert f"/experiments/runs/{run.pk}/" not in outsider.get("/experiments/").content.decode()
    outsider_admin = member(Role.ADMIN, other_tenant)
    assert outsider_admin.post(f"/experiments/runs/{run.pk}/again/").status_code == 404


def test_run_again_starts_a_new_run_with_the_same_settings(chat: Layer, tenant: Tenant, member: MemberClient) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    first = start(operator, tenant, chat, token_budget="500")
    response = operator.post(f"/experiments/runs/{first.pk}/again/")
    second = ExperimentRun.objects.exclude(pk=first.pk).get()
    assert response["Location"] == f"/experiments/runs/{second.pk}/"
    assert (second.profile_a, second.profile_b, second.token_budget, second.layer_id) == (
        "starved",
        "roomy",
        500,
        chat.pk,
    )


def test_a_developer_saves_a_console_search_as_a_question_set(
    chat: Layer, tenant: Tenant, member: MemberClient
) -> None:
    """Each query the search finds once, expecting the items its agent reported it used."""
    used = {item.external_id: item.pk for item in chat.items.all()}
    for query in ("What car does Evan drive?", "What car does Evan drive?", "Where did they kayak?", "Unrelated"):
        context_assemble(workspace=tenant.workspace, params=ContextParams(layer_id=chat.pk, query=query, timeout_ms=0))
    records_flush()
    car = AssemblyRecord.objects.filter(request__query="What car does Evan drive?").order_by("id").first()
    assert car is not None
    record_consumption_claim(record_id=car.pk, used=[used["car"], used["dog"]], at=timezone.now())

    developer = member(Role.DEVELOPER, tenant)
    console = developer.get("/console/?q=Evan").content.decode()
    assert 'id="save-set"' in console and '<input type="hidden" name="q" value="Evan">' in console
    assert 'id="save-set"' not in developer.get("/console/").content.decode()  # unfiltered: the whole history
    response = developer.post("/experiments/sets/from-console/", {"q": "Evan", "set_name": "from the console"})
    saved = QuestionSet.objects.get(name="from the console")
    assert response["Location"] == f"/experiments/sets/{saved.pk}/"
    assert saved.source == QuestionSet.Source.CONSOLE
    assert [(q.question, q.expected) for q in saved.questions.all()] == [("What car does Evan drive?", ["car", "dog"])]

    everything = developer.post("/experiments/sets/from-console/", {"origin": "agent", "set_name": "all"})
    assert everything.status_code == 302
    questions = QuestionSet.objects.get(name="all").questions.all()
    assert [q.question for q in questions] == ["Unrelated", "Where did they kayak?", "What car does Evan drive?"]
    assert [q.expected for q in questions] == [[], [], ["car", "dog"]]  # asked, scored only where reported

    nothing = developer.post("/experiments/sets/from-console/", {"q": "zebra", "set_name": "none"})
    assert nothing["Location"] == "/console/?q=zebra" and not QuestionSet.objects.filter(name="none").exists()
    again = developer.post("/experiments/sets/from-console/", {"q": "Evan", "set_name": "from the console"})
    assert again.status_code == 302 and QuestionSet.objects.filter(name="from the console").count() == 1
    bad = developer.post("/experiments/sets/from-console/", {"layer": "nope", "set_name": "bad"})
    assert bad.status_code == 302 and not QuestionSet.objects.filter(name="bad").exists()
    assert member(Role.OPERATOR, tenant).post("/experiments/sets/from-console/", {"set_name": "x"}).status_code == 403


def test_a_stopped_run_keeps_what_it_asked(chat: Layer, tenant: Tenant, member: MemberClient) -> None:
    operator = member(Role.OPERATOR, tenant)
    upload(operator, jsonl(*QUESTIONS))
    queued = start(operator, tenant, chat)
    assert 'action="/experiments/runs/' in operator.get(f"/experiments/runs/{queued.pk}/").content.decode()
    assert member(Role.VIEWER, tenant).post(f"/experiments/runs/{queued.pk}/stop/").status_code == 403
    assert operator.post(f"/experiments/runs/{queued.pk}/stop/").status_code == 302
    assert experiment_execute(run_id=queued.pk) == ExperimentRun.State.STOPPED  # never claimed
    assert not QuestionResult.objects.filter(run=queued).exists()

    running = start(operator, tenant, chat, token_budget="300")
    ExperimentRun.objects.filter(pk=running.pk).update(state=ExperimentRun.State.RUNNING)
    operator.post(f"/experiments/runs/{running.pk}/stop/")
    assert ExperimentRun.objects.get(pk=running.pk).stop_requested
    assert "Stopping before the next question" in operator.get(f"/experiments/runs/{running.pk}/").content.decode()
    ExperimentRun.objects.filter(pk=running.pk).update(state=ExperimentRun.State.QUEUED)  # as the claim finds it
    assert experiment_execute(run_id=running.pk) == ExperimentRun.State.STOPPED
    page = operator.get(f"/experiments/runs/{running.pk}/").content.decode()
    assert "Stopped after 0 of 3 questions" in page and "hx-trigger" not in page
