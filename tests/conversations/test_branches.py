"""Branching conversations: a message with two children, listing branches, following one."""

from __future__ import annotations

import pytest

from tests.conftest import Tenant
from tests.conversations.conftest import message

pytestmark = pytest.mark.django_db


@pytest.fixture
def tree(tenant: Tenant, session: int) -> dict[str, int]:
    q = message(tenant, session, "Which queue should the workers use?")
    a = message(tenant, session, "Two options: Redis streams or RabbitMQ.", role="assistant", parent=q)
    left = message(tenant, session, "Let's explore Redis streams.", parent=a)
    right = message(tenant, session, "What about RabbitMQ instead?", parent=a)
    deeper = message(tenant, session, "RabbitMQ needs its own cluster.", role="assistant", parent=right)
    return {"q": q, "a": a, "left": left, "right": right, "deeper": deeper}


def test_it_lists_every_branch_with_its_fork(tenant: Tenant, session: int, tree: dict[str, int]) -> None:
    body = tenant.client.get(f"/api/v1/layers/{session}/branches/").json()
    assert body["messages"] == 5 and body["roots"] == [tree["q"]]
    assert body["forks"] == [{"id": tree["a"], "children": [tree["left"], tree["right"]]}]
    branches = {b["leaf"]: b for b in body["branches"]}
    assert set(branches) == {tree["left"], tree["deeper"]}
    assert branches[tree["left"]]["ids"] == [tree["q"], tree["a"], tree["left"]]
    assert branches[tree["deeper"]]["ids"] == [tree["q"], tree["a"], tree["right"], tree["deeper"]]
    assert all(b["fork"] == tree["a"] for b in branches.values())
    assert branches[tree["deeper"]]["preview"] == "RabbitMQ needs its own cluster."


def test_it_follows_the_branch_through_a_message(tenant: Tenant, tree: dict[str, int]) -> None:
    right = tenant.client.get(f"/api/v1/items/{tree['right']}/thread/").json()
    assert [m["id"] for m in right["messages"]] == [tree["q"], tree["a"], tree["right"], tree["deeper"]]
    assert right["forks"] == [{"id": tree["a"], "children": [tree["left"], tree["right"]]}]
    from_root = tenant.client.get(f"/api/v1/items/{tree['q']}/thread/").json()
    assert [m["id"] for m in from_root["messages"]] == [tree["q"], tree["a"], tree["left"]]  # the earliest child
    assert from_root["messages"][1]["children"] == [tree["left"], tree["right"]]


def test_branches_belong_to_their_workspace(
    tenant: Tenant, other_tenant: Tenant, session: int, tree: dict[str, int]
) -> None:
    for url in (f"/api/v1/layers/{session}/branches/", f"/api/v1/items/{tree['q']}/thread/"):
        response = other_tenant.client.get(url)
        assert response.status_code == 404 and response.json()["error"]["code"] in ("layer_not_found", "item_not_found")


def test_a_parent_from_another_workspace_is_refused(tenant: Tenant, other_tenant: Tenant, tree: dict[str, int]) -> None:
    from tests.conversations.conftest import make_session

    theirs = make_session(other_tenant)
    body = {"layer": theirs, "kind": "message", "role": "user", "content": "hi", "parent": tree["q"]}
    response = other_tenant.client.post("/api/v1/items/", body, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "parent_not_found"
