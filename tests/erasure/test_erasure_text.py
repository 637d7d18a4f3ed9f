"""A phrase planted in every place the service keeps text is gone after its erasure: from every API,
page, dump and trace, and from every text and JSON column of every table (issue 24 item 2)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client
from rest_framework.test import APIClient

from apps.assembly.services import records_flush
from apps.conversations.communities import communities_refresh
from apps.experiments.questions import QuestionInput
from apps.experiments.services import question_set_create
from apps.layers.models import Item, Layer, Relationship
from apps.summaries.models import Summary
from apps.summaries.services import layer_summarize
from apps.workspaces.models import Membership, Role
from tests.erasure.text_scan import hits
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db

PHRASE = "Quokka Marmalade Zeppelin"
ASKED = "quokka marmalade zeppelin"  # the match ignores case


def post(client: APIClient, path: str, body: dict[str, object], **headers: str) -> dict:  # type: ignore[type-arg]
    response = client.post(path, body, format="json", **headers)
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.fixture
def planted(tenant: Tenant) -> dict[str, object]:
    """The phrase in an item, a message, a metadata value, summaries at every level, a community, a
    context request's query and context (its record, trace and cached answer), an idempotent answer,
    an attempt and an error pattern; beside it, content that must stay."""
    c = tenant.client
    project = post(c, "/api/v1/layers/", {"kind": "project", "name": "Launch", "parent": tenant.root.pk})["id"]
    session = post(c, "/api/v1/layers/", {"kind": "session", "name": "Chat", "parent": project, "external_id": "s1"})[
        "id"
    ]
    kept, fact, tagged = post(
        c,
        "/api/v1/items/bulk/",
        {
            "layer": project,
            "items": [
                {"kind": "memory", "type": "fact", "content": "Database backups are kept for 35 days."},
                {"kind": "memory", "type": "fact", "content": f"The launch code name is {PHRASE}."},
                {"kind": "document", "content": "Launch checklist, signed off.", "metadata": {"note": PHRASE}},
            ],
        },
    )["ids"]
    post(c, "/api/v1/relationships/", {"source": fact, "target": kept, "kind": "relates_to"})
    messages = post(
        c,
        "/api/v1/items/bulk/",
        {
            "layer": session,
            "items": [
                {"kind": "message", "role": "user", "content": f"Call the launch {PHRASE}.", "task_ids": ["t1"]},
                {
                    "kind": "message",
                    "role": "assistant",
                    "content": "Noted, the launch has a name.",
                    "task_ids": ["t1"],
                },
                {"kind": "message", "role": "user", "content": "When do backups run?", "task_ids": ["t1"]},
            ],
        },
    )["ids"]
    for layer_id in (session, project, tenant.root.pk):
        layer_summarize(layer=Layer.objects.get(pk=layer_id), force=True, extractive=True)
    communities_refresh(layer_id=session, force=True)
    body = {"layer": session, "query": f"What is {PHRASE}?", "token_budget": 2000, "timeout_ms": 0}
    answer = post(c, "/api/v1/context/", body, HTTP_IDEMPOTENCY_KEY="ask-1")
    post(c, "/api/v1/context/", body)  # a cache hit: its record keeps the query too
    group = {"layer": session, "group_id": "deploy", "agent_type": "coder"}
    post(c, "/api/v1/attempts/", {**group, "outcome": "failed", "error": f"launch {PHRASE} refused: code 42"})
    post(c, "/api/v1/attempts/", {**group, "outcome": "succeeded", "solution": f"rename {PHRASE} first"})
    question_set = question_set_create(
        workspace=tenant.workspace,
        name="Launch questions",
        questions=[QuestionInput(question=f"What is {PHRASE}?", expected=()), QuestionInput("Backups?", ())],
    )
    records_flush()
    return {
        "question_set": question_set.pk,
        "project": project,
        "session": session,
        "kept": kept,
        "erased": [fact, tagged, messages[0]],
        "trace_id": answer["trace_id"],
        "tokens": answer["total_tokens"],
        "body": body,
    }


def test_the_scan_finds_the_phrase_in_every_place_before_the_erasure(tenant: Tenant, planted: dict) -> None:  # type: ignore[type-arg]
    found = hits(PHRASE)
    for place in (
        "layers_item.content",
        "layers_item.metadata",
        "summaries_summary.text",
        "conversations_community.summary",
        "assembly_assemblyrecord.request",
        "assembly_assemblyrecord.context",
        "error_patterns_attempt.error",
        "error_patterns_errorpattern.solution",
        "layers_itemsearch.search_vector",
        "experiments_setquestion.question",
    ):
        assert place in found, (place, found)


def test_an_erased_phrase_is_found_nowhere_but_the_figures_stay(
    tenant: Tenant,
    planted: dict,
    django_user_model: type[AbstractUser],  # type: ignore[type-arg]
) -> None:
    admin = admin_client(tenant)
    dry = post(admin, "/api/v1/erasure/", {"text": ASKED, "dry_run": True})
    places = dry["places"]
    assert dry["dry_run"] is True and dry["state"] == "done"
    assert places["items"]["found"] == 3 and places["items"]["removed"] == 0
    assert places["relationships"]["found"] == 1
    for place in ("summaries", "communities", "assembly_records", "attempts", "error_patterns", "idempotent_answers"):
        assert places[place]["found"] >= 1, (place, places)
    assert Item.objects.filter(pk__in=planted["erased"]).count() == 3  # a dry run changes nothing

    refused = admin.post("/api/v1/erasure/", {"text": ASKED}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "erasure_dry_run_required"
    other = admin.post("/api/v1/erasure/", {"text": "quokka", "dry_run_id": dry["id"]}, format="json")
    assert other.status_code == 409 and other.json()["error"]["code"] == "erasure_dry_run_mismatch"

    receipt = post(admin, "/api/v1/erasure/", {"text": PHRASE.upper(), "dry_run_id": dry["id"]})
    assert receipt["state"] == "done" and receipt["dry_run_of"] == dry["id"]
    done = receipt["places"]
    assert done["items"]["removed"] == 3 and done["relationships"]["removed"] == 1
    assert done["summaries"]["regenerated"] >= 3 and done["communities"]["regenerated"] >= 1
    assert done["assembly_records"]["rewritten"] == done["assembly_records"]["found"] >= 2
    assert done["attempts"]["removed"] == 2 and done["error_patterns"]["removed"] == 1
    assert done["idempotent_answers"]["removed"] >= 1
    assert done["experiment_questions"]["rewritten"] == 1
    assert done["cached_contexts"]["removed"] >= 1
    assert "quokka" not in json.dumps(receipt).lower()

    # The database: no text, varchar, JSON or search column of any table holds it.
    assert hits(PHRASE) == []
    assert hits("Quokka") == []

    # What was not named stays; what was built from it is rebuilt without it.
    assert Item.objects.filter(pk=planted["kept"]).exists()
    assert not Item.objects.filter(pk__in=planted["erased"]).exists()
    assert not Relationship.objects.filter(target_id=planted["kept"]).exists()
    assert Summary.objects.filter(layer_id=planted["project"]).count() == 3
    assert "backups" in Summary.objects.get(layer_id=planted["project"], depth="detailed").text

    c = tenant.client
    # The APIs.
    trace = c.get(f"/api/v1/traces/{planted['trace_id']}/")
    assert trace.status_code == 200
    assert trace.json()["tokens_used"] == planted["tokens"]  # the figures stay
    assert "[erased]" in json.dumps(trace.json())
    answers = [
        c.post(
            "/api/v1/context/",
            {"layer": planted["project"], "query": "launch code name", "timeout_ms": 0},
            format="json",
        ).content,
        c.get(f"/api/v1/items/?layer={planted['project']}").content,
        c.get(f"/api/v1/items/?layer={planted['session']}").content,
        c.get("/api/v1/history/", {"query": "launch name", "layer": planted["session"]}).content,
        c.get(f"/api/v1/layers/{planted['project']}/summaries/").content,
        c.get(f"/api/v1/layers/{tenant.root.pk}/summaries/").content,
        c.get(f"/api/v1/layers/{planted['session']}/communities/").content,
        c.get(f"/api/v1/layers/{planted['session']}/export/").content,
        c.get("/api/v1/error-patterns/").content,
        c.get("/api/v1/attempts/", {"layer": planted["session"]}).content,
        c.get("/api/v1/stats/").content,
        admin.get("/api/v1/erasure/").content,
        admin.get(f"/api/v1/erasure/{receipt['id']}/").content,
    ]
    # The pages, as a developer of the workspace sees them.
    person = django_user_model.objects.create_user(username="dev", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=person, role=Role.ADMIN)
    page = Client()
    page.force_login(person)
    for path in (
        "/",
        f"/console/traces/{planted['trace_id']}/",
        "/console/",
        "/console/?q=launch",
        "/console/state/",
        f"/console/state/{planted['project']}/",
        f"/console/state/{planted['session']}/",
        f"/sessions/{planted['session']}/",
        f"/layers/{planted['project']}/",
        f"/layers/{planted['session']}/",
        "/patterns/",
        "/experiments/",
        f"/experiments/sets/{planted['question_set']}/",
    ):
        response = page.get(path)
        assert response.status_code == 200, (path, response.status_code)
        assert b"quokka" not in response.content.lower(), path
    for number, body in enumerate(answers):
        assert b"quokka" not in body.lower(), number

    # The idempotent answer is gone: the same key runs the request again (which asks anew, with the
    # phrase in its own query) instead of replaying the first answer.
    replayed = c.post("/api/v1/context/", planted["body"], format="json", HTTP_IDEMPOTENCY_KEY="ask-1")
    assert replayed.status_code == 200 and "Idempotent-Replayed" not in replayed.headers
    assert "quokka" not in replayed.json()["context"].lower()
