"""The history tool: by meaning, by task, by ids; formats, auth and workspace scoping."""

from __future__ import annotations

import json

import pytest

from apps.conversations.communities import communities_refresh
from apps.layers.embedder import items_embed_pending
from tests.conversations.sessions import AUTH, DATABASE, make_session, messages
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(tenant: Tenant, session: int) -> dict[str, list[int]]:
    auth = messages(tenant, session, AUTH, task_ids=["AUTH-1"])
    db = messages(tenant, session, DATABASE, task_ids=["DB-2"])
    items_embed_pending(workspace_id=tenant.workspace.pk)
    communities_refresh(layer_id=session)
    return {"auth": auth, "db": db}


def history(t: Tenant, **params: object) -> dict:  # type: ignore[type-arg]
    response = t.client.get("/api/v1/history/", params)
    assert response.status_code == 200, response.json()
    return response.json()


def test_all_messages_about_a_subject(tenant: Tenant, session: int, chat: dict[str, list[int]]) -> None:
    body = history(tenant, layer=session, query="authentication and login")
    found = [m["id"] for m in body["messages"]]
    assert set(found) >= set(chat["auth"][:4]) and not set(found) & set(chat["db"])
    assert found == sorted(found)  # oldest first, like a transcript
    assert body["format"] == "markdown" and body["context"].startswith("# Context")
    assert all(0 < m["relevance"] <= 1 for m in body["messages"])


def test_what_we_discussed_about_a_task(tenant: Tenant, session: int, chat: dict[str, list[int]]) -> None:
    body = history(tenant, layer=session, task="DB-2", format="json")
    assert [m["id"] for m in body["messages"]] == chat["db"]
    assert [c["key"] for c in body["communities"]] == ["DB-2"]
    pieces = json.loads(body["context"])
    assert pieces[0]["origin"] == "community" and pieces[0]["content"] == body["communities"][0]["summary"]
    assert [p["id"] for p in pieces[1:]] == chat["db"] and pieces[1]["role"] == "user"
    narrowed = history(tenant, layer=session, task="DB-2", query="index on the orders table")
    assert narrowed["messages"] and {m["id"] for m in narrowed["messages"]} <= set(chat["db"])


def test_messages_by_id(tenant: Tenant, chat: dict[str, list[int]]) -> None:
    wanted = [chat["db"][1], chat["auth"][0]]
    body = history(tenant, ids=",".join(map(str, wanted)), format="text")
    assert [m["id"] for m in body["messages"]] == sorted(wanted)
    assert body["context"].startswith("[user ") and DATABASE[1] in body["context"]
    assert body["total_tokens"] > 0 and body["messages"][0]["relevance"] is None


def test_the_history_tool_validates_its_input(tenant: Tenant, chat: dict[str, list[int]]) -> None:
    cases = [
        ({}, "invalid_query"),
        ({"ids": "1,x"}, "invalid_ids"),
        ({"query": "x", "format": "xml"}, "invalid_format"),
        ({"query": "x", "limit": "0"}, "invalid_limit"),
        ({"query": "x", "layer": "abc"}, "invalid_layer"),
    ]
    for params, code in cases:
        response = tenant.client.get("/api/v1/history/", params)
        assert response.status_code == 400 and response.json()["error"]["code"] == code, (params, response.json())


def test_the_history_tool_needs_a_key_and_stays_in_its_workspace(
    tenant: Tenant, other_tenant: Tenant, anon: object, session: int, chat: dict[str, list[int]]
) -> None:
    response = anon.get("/api/v1/history/", {"query": "login"})  # type: ignore[attr-defined]
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"
    foreign_layer = other_tenant.client.get("/api/v1/history/", {"layer": session, "query": "login"})
    assert foreign_layer.status_code == 404 and foreign_layer.json()["error"]["code"] == "layer_not_found"
    foreign_ids = other_tenant.client.get("/api/v1/history/", {"ids": str(chat["auth"][0])})
    assert foreign_ids.status_code == 404 and foreign_ids.json()["error"]["code"] == "item_not_found"
    theirs = make_session(other_tenant)
    messages(other_tenant, theirs, ["Our own login page is blue."])
    body = other_tenant.client.get("/api/v1/history/", {"query": "login"}).json()
    assert [m["layer"] for m in body["messages"]] == [theirs]
