"""Export and import of a session's graph: round trip equal modulo ids; validated input."""

from __future__ import annotations

import copy
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from apps.conversations.communities import communities_refresh
from apps.conversations.transfer import _check_graph
from apps.core import background
from apps.core.errors import InvalidInput
from apps.layers.embedder import items_embed_pending
from apps.summaries.models import Summary
from tests.conversations.sessions import AUTH, DATABASE, message, messages
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def graph(tenant: Tenant, session: int) -> dict:  # type: ignore[type-arg]
    contents = [text for pair in zip(AUTH, DATABASE, strict=True) for text in pair]
    ids = messages(tenant, session, contents, task_ids=["T-1"])
    fork = message(tenant, session, "Decision: we go with OAuth.", parent=ids[-1], role="assistant")
    message(tenant, session, "Or passwords after all?", parent=ids[-1])
    message(tenant, session, "OAuth it is.", parent=fork)
    tenant.client.post(f"/api/v1/items/{ids[3]}/importance/", {"important": True}, format="json")
    background.wait_idle(120)  # transactional tests run the change-triggered summaries: let them land first
    Summary.objects.update_or_create(
        layer_id=session,
        depth="sentence",
        personalized_for=None,
        defaults={
            "workspace": tenant.workspace,
            "text": "Login and database work.",
            "token_count": 5,
            "source_hash": "abc",
            "generated_at": timezone.now() - timedelta(hours=1),
            "provider": "extractive",
        },
    )
    items_embed_pending(workspace_id=tenant.workspace.pk)
    communities_refresh(layer_id=session)
    tenant.client.get("/api/v1/history/", {"ids": str(ids[0])})
    background.wait_idle(120)
    return tenant.client.get(f"/api/v1/layers/{session}/export/").json()


@pytest.mark.django_db(transaction=True)
def test_an_export_imported_into_a_new_session_exports_again_equal(
    tenant: Tenant,
    session: int,
    graph: dict,  # type: ignore[type-arg]
) -> None:
    assert len(graph["messages"]) == 15 and {c["kind"] for c in graph["communities"]} == {"task", "topic"}
    assert {s["depth"]: s["text"] for s in graph["summaries"]}["sentence"] == "Login and database work."
    forks = [m for m in graph["messages"] if m["content"] == "Or passwords after all?"]
    assert forks[0]["parent"] == "m12"
    response = tenant.client.post(
        "/api/v1/layers/import/", {"parent": tenant.root.pk, "name": "copy", "graph": graph}, format="json"
    )
    assert response.status_code == 201, response.json()
    copy_id = response.json()["layer"]
    assert copy_id != session
    # On-commit work (embedding, communities, the change-triggered summaries) must not replace what was imported.
    assert background.wait_idle(120)
    again = tenant.client.get(f"/api/v1/layers/{copy_id}/export/").json()
    assert again["layer"]["name"] == "copy"
    assert {k: v for k, v in again.items() if k != "layer"} == {k: v for k, v in graph.items() if k != "layer"}
    original = tenant.client.get(f"/api/v1/layers/{session}/branches/").json()
    copied = tenant.client.get(f"/api/v1/layers/{copy_id}/branches/").json()
    assert len(copied["forks"]) == 1 and [b["length"] for b in copied["branches"]] == [
        b["length"] for b in original["branches"]
    ]


def test_an_import_is_validated(tenant: Tenant, other_tenant: Tenant, graph: dict) -> None:  # type: ignore[type-arg]
    def post(g: dict, parent: int | None = None, client: object = None) -> object:  # type: ignore[type-arg]
        body = {"parent": parent or tenant.root.pk, "graph": g}
        return (client or tenant.client).post("/api/v1/layers/import/", body, format="json")  # type: ignore[attr-defined]

    unknown_parent = copy.deepcopy(graph)
    unknown_parent["messages"][1]["parent"] = "m999"
    cycle = copy.deepcopy(graph)
    cycle["messages"][0]["parent"], cycle["messages"][1]["parent"] = "m2", "m1"
    bad_member = copy.deepcopy(graph)
    bad_member["communities"][0]["members"].append("nope")
    for g in (unknown_parent, cycle, bad_member):
        response = post(g)
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph"  # type: ignore[attr-defined]
    wrong_format = {**graph, "format": "other"}
    assert post(wrong_format).json()["error"]["code"] == "invalid_graph"  # type: ignore[attr-defined]
    bad_role = copy.deepcopy(graph)
    bad_role["messages"][0]["role"] = "robot"
    assert post(bad_role).status_code == 400  # type: ignore[attr-defined]
    foreign = post(graph, parent=tenant.root.pk, client=other_tenant.client)
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "layer_not_found"  # type: ignore[attr-defined]


def test_export_stays_in_its_workspace(other_tenant: Tenant, session: int) -> None:
    response = other_tenant.client.get(f"/api/v1/layers/{session}/export/")
    assert response.status_code == 404 and response.json()["error"]["code"] == "layer_not_found"


def _post(tenant: Tenant, graph: dict[str, Any]) -> Any:
    return tenant.client.post("/api/v1/layers/import/", {"parent": tenant.root.pk, "graph": graph}, format="json")


def _summary(depth: str = "sentence", text: str = "Login work.", tokens: int = 3) -> dict[str, Any]:
    return {
        "depth": depth,
        "text": text,
        "token_count": tokens,
        "source_hash": "abc",
        "generated_at": timezone.now().isoformat(),
        "provider": "extractive",
        "stale": False,
    }


def test_two_summaries_of_one_depth_or_a_repeated_member_are_rejected(tenant: Tenant, graph: dict) -> None:  # type: ignore[type-arg]
    twice = copy.deepcopy(graph)
    twice["summaries"] = [_summary(), _summary(text="Database work.")]
    response = _post(tenant, twice)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph", response.json()
    assert "sentence" in response.json()["error"]["message"]
    repeated = copy.deepcopy(graph)
    repeated["communities"][0]["members"].append(repeated["communities"][0]["members"][0])
    response = _post(tenant, repeated)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph", response.json()


def test_a_summary_over_its_depth_limit_or_a_backwards_community_is_rejected(tenant: Tenant, graph: dict) -> None:  # type: ignore[type-arg]
    long = copy.deepcopy(graph)
    long["summaries"] = [_summary(text="word " * 80, tokens=10)]
    response = _post(tenant, long)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph", response.json()
    assert "sentence" in response.json()["error"]["message"]
    backwards = copy.deepcopy(graph)
    c = backwards["communities"][0]
    c["first_at"], c["last_at"] = c["last_at"], c["first_at"]
    response = _post(tenant, backwards)
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph", response.json()


def test_imported_summaries_are_recounted_with_the_real_tokenizer(tenant: Tenant, graph: dict) -> None:  # type: ignore[type-arg]
    lying = copy.deepcopy(graph)
    lying["summaries"] = [_summary(text="Login and database work.", tokens=1)]
    response = _post(tenant, lying)
    assert response.status_code == 201, response.json()
    stored = Summary.objects.get(layer_id=response.json()["layer"], depth="sentence")
    assert stored.token_count == 5


def test_nul_in_imported_metadata_is_rejected(tenant: Tenant, graph: dict) -> None:  # type: ignore[type-arg]
    for metadata in ({"note": "a\u0000b"}, {"a\u0000": 1}, {"deep": [{"x": ["ok", "\u0000"]}]}):
        bad = copy.deepcopy(graph)
        bad["messages"][0]["metadata"] = metadata
        response = _post(tenant, bad)
        assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_graph", response.json()
        assert "metadata" in response.json()["error"]["message"]


def test_the_graph_check_is_linear_in_a_long_chain() -> None:
    n = 20_000
    graph = {
        "messages": [{"ref": f"m{i}", "parent": f"m{i - 1}" if i else None} for i in range(n)],
        "summaries": [],
        "communities": [],
    }
    started = time.perf_counter()
    _check_graph(graph)
    assert time.perf_counter() - started < 1.0
    graph["messages"][0]["parent"] = f"m{n - 1}"
    with pytest.raises(InvalidInput, match="ancestor"):
        _check_graph(graph)
