"""The Python client against a live server: typed answers, streaming, pages, bulk load, errors, retries."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import httpx
import pytest

from apps.layers.models import Item
from contextarch_client import (
    AsyncContextArchitect,
    AuthenticationFailed,
    ContextArchitect,
    ContextResult,
    InvalidRequest,
    NotFound,
    RetryPolicy,
    ServerError,
    TokenCount,
)
from tests.clients.live_data import Gateway, Live
from tests.support.live import PORTS, port_free_in, uvicorn_server
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server
QUESTION = "How long are database backups kept?"


def test_it_assembles_a_typed_context_and_streams_the_same_chunks(live: Live) -> None:
    # No deadline: under load the first (cold) answer may come back partial, and a partial answer is
    # not cached, so the stream would assemble the full one and the two would differ.
    with ContextArchitect(live.base, live.a.secret) as ca:
        answer = ca.get_context(layer_external_id="sess-a", query=QUESTION, token_budget=80, timeout_ms=0)
        events = list(ca.stream_context(layer_external_id="sess-a", query=QUESTION, token_budget=80, timeout_ms=0))

    assert isinstance(answer, ContextResult)
    assert answer.chunks[0].external_id == "backups" and answer.total_tokens <= 80
    assert [e.event for e in events] == ["chunk"] * len(answer.chunks) + ["complete"]
    assert [e.data["id"] for e in events[:-1]] == [c.id for c in answer.chunks]
    assert events[-1].data["total_tokens"] == answer.total_tokens


def test_it_compiles_the_context_from_a_given_message(live: Live) -> None:
    with ContextArchitect(live.base, live.a.secret) as ca:
        session = ca.create_layer(kind="session", name="broker", parent=live.a.root.pk).id
        asked = ca.create_item(layer=session, kind="message", role="user", content="Kafka or RabbitMQ for the workers?")
        kafka = ca.create_item(layer=session, kind="message", role="assistant", content="Kafka, for its replay.")
        ca.create_item(layer=session, kind="message", role="user", content="Then twelve partitions to start.")
        newest = ca.get_context(layer=session, query="broker", token_budget=500, timeout_ms=0)
        at_kafka = ca.get_context(layer=session, query="broker", token_budget=500, message=kafka.id, timeout_ms=0)

    assert len(newest.chunks) == 3
    assert {c.id for c in at_kafka.chunks} == {asked.id, kafka.id}  # the turn said after it is left out


def test_the_async_client_assembles_streams_and_pages_through_items_and_layers(live: Live) -> None:
    async def work() -> tuple[ContextResult, list[str], list[str], list[str]]:
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            answer = await ca.get_context(layer=live.session.pk, query=QUESTION, token_budget=80)
            events = [e.event async for e in ca.stream_context(layer=live.session.pk, query=QUESTION)]
            items = [i.external_id or "" async for i in ca.iter_items(layer=live.session.pk, page_size=2)]
            layers = [layer.kind async for layer in ca.iter_layers(page_size=1)]
            return answer, events, items, layers

    answer, events, items, layers = asyncio.run(work())

    assert answer.chunks[0].external_id == "backups"
    assert events[-1] == "complete" and len(events) >= 2
    assert items == ["backups", "deploys", "android"]  # 2 pages of 2
    assert layers == ["company", "session"]


def test_it_bulk_loads_in_chunks_with_a_progress_bar_and_waits_until_searchable(
    live: Live, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [
        {"kind": "memory", "type": "fact", "content": f"Service {n} is owned by team {n % 7}."} for n in range(119)
    ]
    items.append({"kind": "memory", "type": "fact", "content": "The payroll export runs on the first Monday."})
    with ContextArchitect(live.base, live.a.secret) as ca:
        loaded = ca.bulk_load(layer=live.session.pk, items=items, chunk_size=50, timeout=300)
        status = ca.status()
        found = ca.get_context(layer=live.session.pk, query="When do salaries get exported?", token_budget=40)

    assert (len(loaded.ids), loaded.chunks, loaded.searchable) == (120, 3, True)
    assert status.items_pending_embedding == 0
    assert Item.objects.filter(pk__in=loaded.ids).count() == 120
    assert "payroll export" in found.context  # found by meaning: no word of the query is in it
    progress = capsys.readouterr().err
    assert "bulk load" in progress and "120/120" in progress


def test_a_failed_chunk_raises_with_the_ids_already_created(live: Live) -> None:
    good = [{"kind": "memory", "type": "fact", "content": f"Fact number {n}."} for n in range(4)]
    items = [*good, {"kind": "memory", "type": "fact", "content": ""}]
    with ContextArchitect(live.base, live.a.secret) as ca, pytest.raises(InvalidRequest) as raised:
        ca.bulk_load(layer=live.session.pk, items=items, chunk_size=4, progress=False, wait=False)

    assert raised.value.details["failed_chunk"] == 1, raised.value
    assert len(raised.value.details["created_ids"]) == 4


def test_errors_are_exceptions_of_their_code_family(live: Live) -> None:
    with ContextArchitect(live.base, live.b.secret) as other:
        with pytest.raises(NotFound) as missing:
            other.get_context(layer=live.session.pk, query=QUESTION)
        with pytest.raises(InvalidRequest) as invalid:
            other.get_context(layer=live.b.root.pk, query=QUESTION, token_budget=0)
    with ContextArchitect(live.base, "ca_not_a_key") as stranger, pytest.raises(AuthenticationFailed) as refused:
        stranger.status()

    assert (missing.value.status, missing.value.code) == (404, "layer_not_found")
    assert (invalid.value.status, invalid.value.code) == (400, "invalid_token_budget")
    assert (refused.value.status, refused.value.code) == (401, "invalid_api_key")


def test_it_records_attempts_matches_errors_searches_history_and_reports_consumption(live: Live) -> None:
    error = "TimeoutError: upstream 10.1.2.3:443 did not answer in 30s"
    with ContextArchitect(live.base, live.a.secret) as ca:
        ca.create_item(layer=live.session.pk, kind="message", role="user", content="Retry the upstream call twice.")
        scope = {"layer": live.session.pk, "group_id": "g", "agent_type": "coder"}
        ca.record_attempt(**scope, iteration=1, outcome="failed", error=error)
        fixed = ca.record_attempt(**scope, iteration=2, outcome="succeeded", solution="Raise the timeout to 60s.")
        matched = ca.match_error(error=error)
        history = ca.search_history(query="retry upstream", layer=live.session.pk, format="json")
        trace_id = ca.get_context(layer=live.session.pk, query=QUESTION).trace_id
        first = ca.report_consumption(trace_id=trace_id, used=[])
        again = ca.report_consumption(trace_id=trace_id, used=[])
        trace = ca.get_trace(trace_id)

    assert fixed.captured is not None and matched.matches[0].solution == "Raise the timeout to 60s."
    assert history.messages[0].content == "Retry the upstream call twice."
    assert (first.duplicate, again.duplicate) == (False, True)
    assert trace.trace_id == trace_id and trace.token_budget > 0


class CountingTransport(httpx.HTTPTransport):
    """httpx's own transport, counting the connections refused."""

    refused = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return super().handle_request(request)
        except httpx.ConnectError:
            CountingTransport.refused += 1
            raise


def test_it_retries_after_a_refused_connection_until_the_server_is_up(live: Live, tmp_path: Path) -> None:
    port = port_free_in(range(PORTS.stop - 1, PORTS.start, -1))
    CountingTransport.refused = 0
    answers: list[object] = []
    client = ContextArchitect(
        f"http://127.0.0.1:{port}",
        live.a.secret,
        retry=RetryPolicy(max_retries=200, backoff=0.2, max_delay=0.5),
        transport=CountingTransport(),
    )
    caller = threading.Thread(target=lambda: answers.append(client.status()))
    caller.start()
    wait_until(lambda: CountingTransport.refused, interval=0.05, what="a refused connection")
    with uvicorn_server(tmp_path / "late.log", port=port):
        caller.join(120)
    client.close()

    assert CountingTransport.refused >= 1
    assert [getattr(a, "workspace", None) for a in answers] == ["acme"]


def test_it_retries_429_and_5xx_and_a_write_whose_answer_was_lost_lands_once(gateway: Gateway, live: Live) -> None:
    policy = RetryPolicy(max_retries=2, backoff=0.01, max_delay=0.05)
    with ContextArchitect(gateway.url, live.a.secret, retry=policy) as ca:
        gateway.failures = [(503, {}, False), (429, {"Retry-After": "0"}, False)]
        assert ca.status().workspace == "acme"
        reads = list(gateway.seen)

        gateway.seen.clear()
        gateway.idempotency_keys.clear()
        gateway.failures = [(502, {}, True)]  # the item is written, the answer is lost on the way back
        item = ca.create_item(layer=live.session.pk, kind="memory", type="fact", content="Written once.")
        writes, keys = list(gateway.seen), list(gateway.idempotency_keys)

        gateway.seen.clear()
        gateway.failures = [(502, {}, False)] * 5
        with pytest.raises(ServerError) as exhausted:
            ca.status()

    assert reads == ["GET /api/v1/status/"] * 3
    assert writes == ["POST /api/v1/items/"] * 2 and keys[0] and keys[0] == keys[1]
    assert list(Item.objects.filter(content="Written once.").values_list("pk", flat=True)) == [item.id]
    assert gateway.seen == ["GET /api/v1/status/"] * 3 and exhausted.value.status == 502  # 1 + max_retries


def test_both_clients_count_tokens_for_a_model(live: Live) -> None:
    chat = [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "How long are backups kept?"}]

    async def work() -> TokenCount:
        async with AsyncContextArchitect(live.base, live.a.secret) as ca:
            return await ca.count_tokens(model="qwen2.5-7b-instruct", messages=chat)

    with ContextArchitect(live.base, live.a.secret) as ca:
        text = ca.count_tokens(model="claude-sonnet-4-5", text=QUESTION)
    counted = asyncio.run(work())

    assert (text.exact, text.encoding, text.calls) == (False, "o200k_base", 0) and text.margin > 0 and text.warnings
    assert (counted.exact, counted.encoding, counted.margin) == (True, "qwen2", 0.0) and counted.tokens > 20
