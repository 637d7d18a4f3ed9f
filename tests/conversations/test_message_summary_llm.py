"""Long messages' SUMMARY and TITLE rungs by the configured LLM (the local stand-in): written in the
background with the communities, several messages per call, once per text, within the daily budget;
assembled context uses them; without an LLM, or when it fails, the engine's own rungs and no call."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client, override_settings
from django.utils import timezone

from apps.conversations.communities import communities_refresh
from apps.conversations.models import GraphState, MessageSummary
from apps.layers.models import Layer
from apps.summaries.batch import BUDGET_SPENT
from apps.web.selectors.conversation_graph import conversation_graph
from apps.workspaces.models import Membership, Role
from tests.summaries.helpers import summary_llm
from tests.support.api import ask, bulk
from tests.support.fake_provider import FakeProvider
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

PASSAGE = re.compile(r"^Passage (\d+):\n(\S+)", re.MULTILINE)
LONG = [
    f"Q{n} note: the {topic} needs a decision this week because the vendor contract renews on Friday "
    "and the finance team wants the numbers before the steering meeting, so please send the figures."
    for n, topic in enumerate(["Kafka cluster", "billing export", "office move"])
]


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """A title and summary per numbered passage, naming its first word (Q0, Q1, Q2)."""
    prompt = body["messages"][1]["content"]
    return {
        n: {"title": f"{word} title", "summary": f"{word} summary by the LLM."} for n, word in PASSAGE.findall(prompt)
    }


@pytest.fixture
def server() -> Iterator[FakeProvider]:
    with summary_llm() as running:
        running.respond = answer
        yield running


@pytest.fixture
def llm(server: FakeProvider) -> Iterator[FakeProvider]:
    with override_settings(SUMMARY_PROVIDER="llm", SUMMARY_LLM_BASE_URL=server.url, SUMMARY_LLM_BATCH=2):
        yield server


def conversation(t: Tenant) -> int:
    """Long turns at distances 29 (title), 17 and 16 (summary) of 30, the rest short."""
    response = t.client.post("/api/v1/layers/", {"kind": "session", "name": "chat", "parent": t.root.pk}, format="json")
    session = int(response.json()["id"])
    contents = [f"Short turn {i}." for i in range(30)]
    contents[0], contents[12], contents[13] = LONG
    now = timezone.now()
    bulk(
        t,
        session,
        [
            {
                "kind": "message",
                "role": "user" if i % 2 == 0 else "assistant",
                "external_id": f"t{i}",
                "content": text,
                "created_at": (now - timedelta(minutes=30 - i)).isoformat(),
            }
            for i, text in enumerate(contents)
        ],
    )
    return session


def depths(t: Tenant, session: int) -> dict[str, tuple[str, str]]:
    body = ask(t, layer=session, query="zebra unrelated words", token_budget=8000, format="json", timeout_ms=0)
    return {c["external_id"]: (c["depth"], c["text"]) for c in body["chunks"] if c.get("external_id")}


def test_long_messages_get_the_llms_summary_and_title_rungs_written_in_batches(
    llm: FakeProvider, tenant: Tenant
) -> None:
    session = conversation(tenant)
    communities_refresh(layer_id=session, llm_now=True)
    asked = [len(PASSAGE.findall(r["messages"][1]["content"])) for r in llm.requests]
    assert asked == [2, 1]  # three long messages, two per call; the short ones are not sent
    shown = depths(tenant, session)
    assert shown["t0"] == ("title", "Q0 title")
    assert shown["t12"] == ("summary", "Q1 summary by the LLM.")
    assert shown["t29"] == ("full", "Short turn 29.")
    communities_refresh(layer_id=session, force=True, llm_now=True)
    assert len(llm.requests) == 2  # the same texts: no second call
    with override_settings(SUMMARY_PROVIDER="extractive"):  # the default: the engine's own rungs
        assert depths(tenant, session)["t12"][1].startswith("Q1 note: the billing export needs a decision")


def test_a_turn_titled_with_its_own_text_gets_the_llms_title(llm: FakeProvider, tenant: Tenant) -> None:
    session = conversation(tenant)
    first = Layer.objects.get(pk=session).items.get(external_id="t0").pk
    titled = tenant.client.patch(f"/api/v1/items/{first}/", {"title": LONG[0]}, format="json")
    assert titled.status_code == 200, titled.json()
    communities_refresh(layer_id=session, llm_now=True)
    assert depths(tenant, session)["t0"] == ("title", "Q0 title")  # its own title is no shorter than the summary


def graph_resolutions(viewer: Client, session: int) -> dict[str, str]:
    """Each turn's resolution on the session page's conversation graph, by external id."""
    response = viewer.get(f"/sessions/{session}/")
    assert response.status_code == 200
    ids = dict(Layer.objects.get(pk=session).items.values_list("pk", "external_id"))
    return {ids[node.id]: node.resolution for node in response.context["graph"].nodes}


@pytest.fixture
def viewer(client: Client, tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    user = django_user_model.objects.create_user(username="ada", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    client.force_login(user)
    return client


def test_the_conversation_graph_shows_the_resolution_the_llms_rungs_give(
    llm: FakeProvider, tenant: Tenant, viewer: Client, django_assert_max_num_queries: Any
) -> None:
    session = conversation(tenant)
    with override_settings(SUMMARY_PROVIDER="extractive"):
        before = graph_resolutions(viewer, session)
    # One long sentence: the engine's own ladder has no summary rung shorter than it, so a title.
    assert before["t12"] == before["t13"] == "title"
    communities_refresh(layer_id=session, llm_now=True)
    shown = graph_resolutions(viewer, session)
    assert (shown["t0"], shown["t12"], shown["t13"], shown["t29"]) == ("title", "summary", "summary", "full")
    assert shown["t12"] == depths(tenant, session)["t12"][0]  # as assembly gives it
    layer = Layer.objects.get(pk=session)
    with django_assert_max_num_queries(6):  # the graph's five and the written rungs' one
        conversation_graph(layer=layer)
    with override_settings(SUMMARY_PROVIDER="extractive"):
        assert graph_resolutions(viewer, session) == before
        with django_assert_max_num_queries(5):  # the default asks nothing more
            conversation_graph(layer=layer)


def test_the_history_tool_gives_long_messages_in_full_whatever_rungs_the_llm_wrote(
    llm: FakeProvider, tenant: Tenant
) -> None:
    session = conversation(tenant)
    communities_refresh(layer_id=session, llm_now=True)
    assert MessageSummary.objects.filter(note="").count() == 3
    wanted = Layer.objects.get(pk=session).items.get(external_id="t12").pk
    response = tenant.client.get("/api/v1/history/", {"ids": str(wanted), "format": "json"})
    assert response.status_code == 200
    (message,) = response.json()["messages"]
    (piece,) = json.loads(response.json()["context"])
    assert message["content"] == piece["content"] == LONG[1] and "depth" not in piece  # fetched in full


def test_a_failing_llm_leaves_the_engines_rungs_and_says_so(llm: FakeProvider, tenant: Tenant) -> None:
    session = conversation(tenant)
    llm.fail_next(10)
    communities_refresh(layer_id=session, llm_now=True)
    assert len(llm.requests) == 1
    notes = set(MessageSummary.objects.values_list("provider", "note"))
    assert len(notes) == 1 and next(iter(notes))[1].startswith("llm_unavailable: InternalServerError")
    assert GraphState.objects.get(layer_id=session).summaries_pending  # the sweep tries again
    assert depths(tenant, session)["t12"][1].startswith("Q1 note: the billing export needs a decision")


def test_a_spent_budget_makes_no_call(llm: FakeProvider, tenant: Tenant) -> None:
    session = conversation(tenant)
    with override_settings(SUMMARY_DAILY_TOKEN_BUDGET=100):
        communities_refresh(layer_id=session, llm_now=True)
    assert llm.requests == []
    assert set(MessageSummary.objects.values_list("provider", "note")) == {("extractive", BUDGET_SPENT)}
    communities_refresh(layer_id=session, llm_now=True)  # room again: written now
    assert len(llm.requests) == 2 and set(MessageSummary.objects.values_list("note", flat=True)) == {""}


def test_without_an_llm_nothing_is_sent_or_stored(server: FakeProvider, tenant: Tenant) -> None:
    with override_settings(SUMMARY_LLM_BASE_URL=server.url):
        session = conversation(tenant)
        communities_refresh(layer_id=session, llm_now=True)
        shown = depths(tenant, session)
    assert server.requests == [] and not MessageSummary.objects.exists()
    assert shown["t0"][0] == "title" and shown["t0"][1].startswith("Q0 note: the Kafka cluster")


def test_an_archive_carries_the_llms_message_summaries_and_the_copy_uses_them_without_asking(
    llm: FakeProvider, tenant: Tenant
) -> None:
    import io

    from apps.core.archive.export import archive_export
    from apps.core.archive.restore import archive_restore
    from apps.layers.models import Item, Layer
    from tests.support.tenants import make_tenant

    session = conversation(tenant)
    communities_refresh(layer_id=session, llm_now=True)
    failed = Item.objects.get(layer_id=session, external_id="t13")
    MessageSummary.objects.filter(item=failed).update(summary="", title="", note="llm_unavailable: down")
    archive = io.BytesIO()
    manifest = archive_export(workspace_id=tenant.workspace.pk, source={}, out=archive)
    assert manifest["members"]["message_summaries.jsonl"]["rows"] == 2  # the failed one is asked again
    asked = len(llm.requests)

    copy = make_tenant("copy")
    archive.seek(0)
    archive_restore(workspace_id=copy.workspace.pk, source=archive)
    restored = Layer.objects.get(workspace=copy.workspace, name="chat").pk
    rows = MessageSummary.objects.filter(item__workspace=copy.workspace)
    assert sorted(rows.values_list("item__external_id", "provider")) == [
        ("t0", "llm:gpt-4o-mini"),
        ("t12", "llm:gpt-4o-mini"),
    ]
    shown = depths(copy, restored)
    assert shown["t0"] == ("title", "Q0 title") and shown["t12"] == ("summary", "Q1 summary by the LLM.")
    assert len(llm.requests) == asked
