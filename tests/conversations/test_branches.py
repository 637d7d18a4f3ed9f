"""Branching conversations: a message with two children, listing branches, following one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.transfer import FORMAT, VERSION
from tests.conversations.sessions import message
from tests.support.tenants import Tenant

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
    assert [b["leaf"] for b in body["branches"]] == [tree["left"], tree["deeper"]]  # newest leaf last
    left, deeper = branches[tree["left"]], branches[tree["deeper"]]
    assert (left["tail"], left["joins"], left["joins_branch"], left["length"]) == (
        [tree["q"], tree["a"], tree["left"]],
        None,
        None,
        3,
    )
    # the second branch names only what the first does not hold, and where it joins it
    assert (deeper["tail"], deeper["joins"], deeper["joins_branch"], deeper["length"]) == (
        [tree["right"], tree["deeper"]],
        tree["a"],
        tree["left"],
        4,
    )
    assert all(b["fork"] == tree["a"] and b["root"] == tree["q"] for b in branches.values())
    assert deeper["preview"] == "RabbitMQ needs its own cluster."
    assert (body["count"], body["next"], body["previous"]) == (2, None, None)
    whole = tenant.client.get(f"/api/v1/items/{tree['deeper']}/thread/").json()  # a branch's whole path
    assert [m["id"] for m in whole["messages"]] == [tree["q"], tree["a"], tree["right"], tree["deeper"]]


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
    from tests.conversations.sessions import make_session

    theirs = make_session(other_tenant)
    body = {"layer": theirs, "kind": "message", "role": "user", "content": "hi", "parent": tree["q"]}
    response = other_tenant.client.post("/api/v1/items/", body, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "parent_not_found"


def _comb(tenant: Tenant, spine: int) -> int:
    """A conversation of 2 x `spine` messages: a chain of turns, each with a second reply that ends
    there (so every turn is a fork and there are `spine` + 1 branches), imported in one request."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    messages: list[dict[str, object]] = []
    for i in range(spine):
        parent = f"s{i - 1}" if i else None
        for ref in (f"s{i}", f"x{i}"):
            at = start + timedelta(seconds=len(messages))
            messages.append(
                {
                    "ref": ref,
                    "parent": parent if ref[0] == "s" else f"s{i - 1}" if i else None,
                    "role": "user",
                    "content": f"Turn {ref}.",
                    "created_at": at.isoformat(),
                }
            )
    graph = {"format": FORMAT, "version": VERSION, "layer": {"name": "comb", "kind": "session"}, "messages": messages}
    response = tenant.client.post("/api/v1/layers/import/", {"parent": tenant.root.pk, "graph": graph}, format="json")
    assert response.status_code == 201, response.content
    return int(response.json()["layer"])


def test_the_branches_answer_grows_linearly_and_is_paged(tenant: Tenant) -> None:
    spine = 600  # 1,200 messages, 601 branches: the whole paths were 181,000 ids (3.6 MB)
    layer = _comb(tenant, spine)
    url: str | None = f"/api/v1/layers/{layer}/branches/?limit=250"
    listed: list[int] = []
    lengths: list[int] = []
    pages = 0
    while url is not None:
        response = tenant.client.get(url)
        assert response.status_code == 200
        assert len(response.content) < 100_000  # a page, not the square of the conversation
        body = response.json()
        assert len(body["branches"]) <= 250
        listed += [i for b in body["branches"] for i in b["tail"]]
        lengths += [b["length"] for b in body["branches"]]
        url, pages = body["next"], pages + 1
    assert pages == 3 and body["count"] == spine + 1
    assert sorted(listed) == sorted(set(listed)) and len(listed) == 2 * spine  # each message exactly once
    assert max(lengths) == spine  # the chain's own branch: its whole path is still known


def test_a_bad_page_is_a_400(tenant: Tenant, session: int) -> None:
    for query, code in (("limit=0", "invalid_limit"), ("limit=1001", "invalid_limit"), ("offset=-1", "invalid_offset")):
        response = tenant.client.get(f"/api/v1/layers/{session}/branches/?{query}")
        assert response.status_code == 400 and response.json()["error"]["code"] == code


def test_a_message_without_a_parent_follows_the_previous_turn(tenant: Tenant, session: int) -> None:
    first = message(tenant, session, "Which queue should the workers use?")
    second = message(tenant, session, "Kafka, for the replay.", role="assistant")
    start = datetime.now(UTC)
    bulk = [
        {"kind": "message", "role": "user", "content": text, "created_at": (start + timedelta(seconds=i)).isoformat()}
        for i, text in enumerate(["How many partitions?", "Twelve to start."])
    ]
    third, fourth = tenant.client.post("/api/v1/items/bulk/", {"layer": session, "items": bulk}, format="json").json()[
        "ids"
    ]
    thread = tenant.client.get(f"/api/v1/items/{fourth}/thread/").json()
    assert [m["id"] for m in thread["messages"]] == [first, second, third, fourth]  # one thread, not four roots
    body = tenant.client.get(f"/api/v1/layers/{session}/branches/").json()
    assert body["roots"] == [first] and body["count"] == 1
    fork = message(tenant, session, "Or RabbitMQ?", parent=first)  # naming a parent still branches
    assert tenant.client.get(f"/api/v1/layers/{session}/branches/").json()["forks"] == [
        {"id": first, "children": [second, fork]}
    ]
