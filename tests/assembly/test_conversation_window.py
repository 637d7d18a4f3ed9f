"""The conversation window: detail by distance from the newest turn, for short turns as
for long ones."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.layers.models import Layer
from apps.summaries.services import layer_summarize
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

LONG = "We compared the two queue designs in detail today. " * 3


def _turns(t: Tenant, session: int, contents: list[str], titles: dict[int, str] | None = None) -> None:
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
                "title": (titles or {}).get(i, ""),
                "created_at": (now - timedelta(minutes=len(contents) - i)).isoformat(),
            }
            for i, text in enumerate(contents)
        ],
    )


def test_a_short_turn_keeps_a_title_beyond_the_full_distance(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    _turns(tenant, session, ["Use option B.", *[LONG] * 11, "Ok."])  # "Use option B." at distance 12
    body = ask(tenant, layer=session, query="zebra unrelated words", token_budget=8000, format="text", timeout_ms=0)
    depth = {c["external_id"]: (c["depth"], c["text"]) for c in body["chunks"]}
    assert depth["t0"] == ("title", "Use option B.")  # beyond the full distance, at the title depth a long turn gets
    assert depth["t1"][0] == "summary" and depth["t12"] == ("full", "Ok.")


def test_a_turn_titled_with_its_own_text_keeps_a_title_rung(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    said = "The nightly invoice export still runs on the old queue while the replica lag of the reports is fixed."
    _turns(tenant, session, [said, *[LONG] * 11, "Ok."], titles={0: said})  # a client titling a turn with its text
    body = ask(tenant, layer=session, query="zebra unrelated words", token_budget=8000, format="text", timeout_ms=0)
    depth = {c["external_id"]: (c["depth"], c["text"]) for c in body["chunks"]}
    assert depth["t0"] == ("title", "The nightly invoice export still runs on the old queue while the…")


def _post(t: Tenant, session: int, content: str, **extra: object) -> int:
    body = {"layer": session, "kind": "message", "role": extra.pop("role", "user"), "content": content, **extra}
    response = t.client.post("/api/v1/items/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def test_a_branch_compiles_from_its_own_path_not_from_the_abandoned_one(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    question = _post(tenant, session, "Which message broker should the workers use?")
    options = _post(tenant, session, "Kafka for replay, or RabbitMQ for routing.", role="assistant")
    kafka = _post(tenant, session, "Go with Kafka then; how many partitions?", parent=options)
    kafka_answer = _post(tenant, session, "Twelve partitions to start.", role="assistant")
    rabbit = _post(tenant, session, "Go with RabbitMQ then; how many replicas?", parent=options)
    _post(tenant, session, "Three replicas in a quorum queue.", role="assistant")
    request = {
        "layer": session,
        "query": "zebra unrelated words",
        "token_budget": 4000,
        "format": "text",
        "timeout_ms": 0,
    }
    on_kafka = ask(tenant, **request, message=kafka_answer)
    texts = "\n".join(c["text"] for c in on_kafka["chunks"])
    assert "Twelve partitions" in texts and "Which message broker" in texts
    assert "RabbitMQ then" not in texts and "quorum" not in texts
    preview = tenant.client.post("/api/v1/context/preview/", {**request, "message": kafka_answer}, format="json")
    reasons = {t["id"]: t["reason"] for t in preview.json()["trace"]}
    assert reasons.get(rabbit) in (None, "other_branch")
    newest = "\n".join(c["text"] for c in ask(tenant, **request)["chunks"])  # the newest message's branch
    assert "quorum" in newest and "RabbitMQ then" in newest and "Kafka then" not in newest
    assert kafka and question
    missing = tenant.client.post("/api/v1/context/", {**request, "message": 10**9}, format="json")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "item_not_found"


def test_compiled_from_a_message_no_summary_tells_a_turn_said_after_it(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    _post(tenant, session, "Kafka or RabbitMQ for the workers?")
    kafka = _post(tenant, session, "Kafka, for its replay.", role="assistant")
    _post(tenant, session, "Then twelve partitions to start.")
    layer_summarize(layer=Layer.objects.get(pk=session), force=True, extractive=True)  # it rolls all three up
    request = {"layer": session, "query": "broker", "token_budget": 500, "timeout_ms": 0}

    at_kafka = tenant.client.post("/api/v1/context/preview/", {**request, "message": kafka}, format="json").json()
    newest = ask(tenant, **request)

    assert "twelve partitions" not in "\n".join(c["text"] for c in at_kafka["chunks"])
    assert {t["reason"] for t in at_kafka["trace"] if t["source"] == "summary"} == {"other_branch"}
    at_newest = {**request, "message": newest["chunks"][0]["id"]}  # no turn after it: its summary may be read
    trace = tenant.client.post("/api/v1/context/preview/", at_newest, format="json").json()["trace"]
    assert [t["reason"] for t in trace if t["source"] == "summary"] == ["duplicate_text"]  # all of it is in already


def test_a_long_message_is_cut_to_the_per_node_caps(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    long = " ".join(f"Sentence {i} of the incident report says what broke and who fixed it." for i in range(90))
    _turns(tenant, session, [long, *["Short reply."] * 7])  # the long turn at distance 7: its summary rung
    newest = ask(tenant, layer=session, query="incident report", token_budget=8000, format="text", timeout_ms=0)
    (chunk,) = [c for c in newest["chunks"] if c["external_id"] == "t0"]
    assert chunk["truncated"] and chunk["tokens"] <= 500 + 10  # the cap, plus the turn's `[user] ` prefix
    assert long.startswith(chunk["text"]) and chunk["text"].endswith(".")
    summary_depth = ask(tenant, layer=session, query="zebra", token_budget=8000, format="text", timeout_ms=0)
    (far,) = [c for c in summary_depth["chunks"] if c["external_id"] == "t0"]
    assert far["depth"] == "summary" and far["tokens"] <= 100 + 10


def test_a_long_title_is_cut_to_the_title_cap(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    title = " ".join(f"point{i}" for i in range(60))  # one "sentence" of 60 words, far over 20 tokens
    report = " ".join(f"clause{i} of the incident report" for i in range(100)) + ". " + LONG  # a longer lead
    _turns(tenant, session, [report, *["Short reply."] * 22], titles={0: title})  # t0 at distance 22
    body = tenant.client.post(
        "/api/v1/context/preview/",
        {"layer": session, "query": "zebra", "token_budget": 8000, "format": "text", "timeout_ms": 0},
        format="json",
    ).json()
    (far,) = [c for c in body["chunks"] if c["external_id"] == "t0"]
    assert far["depth"] == "title" and far["truncated"] and far["tokens"] <= 20 + 10
    assert title.startswith(far["text"].rstrip("…"))


CHAT = (
    "Morning! Did the deploy go out last night?",
    "Yes, it went out at 23:10 without errors.",
    "Great. Can you look at the flaky login test today?",
    "Sure, I think the session cookie expires too early in CI.",
    "Lunch at the new ramen place later?",
    "Sounds good, around noon works for me.",
    "The invoice export is slow for large accounts again.",
    "It reads every line item one by one; I will batch the queries.",
    "Marketing asked for a dark mode on the dashboard.",
    "Let's put it on the roadmap for next quarter.",
    "How is your daughter's football season going?",
    "They won on Saturday, three goals to one!",
)
BACKUPS = "We decided to keep the database backups for 35 days and to test a restore every month."


def test_the_presets_change_the_detail_of_a_sixty_turn_conversation(tenant: Tenant) -> None:
    """The conversation presets (full / summary / title distances) hold for turns the query is not about:
    only the query's strong hits keep their whole text at any distance, so a search that finds every
    turn of a small workspace does not keep them all in full."""
    from apps.layers.embedder import items_embed_pending

    session = layer(tenant, "session", tenant.root.pk)
    contents = [CHAT[i % len(CHAT)] + f" (note {i})" for i in range(60)]
    contents[19] = BACKUPS  # distance 40
    _turns(tenant, session, contents)
    items_embed_pending(workspace_id=tenant.workspace.pk)
    full: dict[str, set[str]] = {}
    for preset in ("aggressive", "balanced", "context_rich"):
        made = tenant.client.post("/api/v1/profiles/", {"name": preset, "conversation_preset": preset}, format="json")
        assert made.status_code == 201, made.json()
        body = ask(
            tenant,
            layer=session,
            query="How long do we keep the database backups?",
            token_budget=20_000,
            profile=preset,
            timeout_ms=0,
        )
        assert not any("keyword search only" in w for w in body["warnings"])
        full[preset] = {c["external_id"] for c in body["chunks"] if c["depth"] == "full"}
    assert all("t19" in ids for ids in full.values())  # the answer, at distance 40, keeps its whole text
    assert len(full["aggressive"]) < len(full["balanced"]) < len(full["context_rich"]) <= 15
