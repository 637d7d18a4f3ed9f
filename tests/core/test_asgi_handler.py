"""The ASGI handler (contextarch/handler.py): the sync middleware chain and the view in one thread,
reused from request to request; the client-gone Event set only when the client left before the
view answered."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import override_settings

from apps.core.client_gone import SCOPE_KEY
from contextarch.handler import OneHopASGIHandler, RequestThreads

pytestmark = [pytest.mark.anyio]

SEEN: list[dict[str, Any]] = []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SeeThreads:
    """Test middleware, first and last in the chain: where the chain and the view ran."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        SEEN.append({"thread": threading.get_ident(), "gone": request.scope[SCOPE_KEY]})  # type: ignore[attr-defined]
        return self.get_response(request)


@pytest.fixture
def handler(settings: Any) -> OneHopASGIHandler:
    SEEN.clear()
    chain = ["tests.core.test_asgi_handler.SeeThreads", *settings.MIDDLEWARE, "tests.core.test_asgi_handler.SeeThreads"]
    with override_settings(MIDDLEWARE=chain):
        return OneHopASGIHandler()


async def get(handler: OneHopASGIHandler, path: str, *, leave_early: bool = False) -> list[dict[str, Any]]:
    """GET `path`; the messages sent. The client's disconnect comes after the response (as servers
    send it when the connection closes), or while the view runs when `leave_early`."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict[str, Any]] = []
    answered = asyncio.Event()
    calls = 0

    async def receive() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            return {"type": "http.request", "body": b"", "more_body": False}
        if not leave_early:
            await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            answered.set()

    await handler(scope, receive, send)
    return sent


async def test_it_runs_the_chain_and_the_view_on_one_thread_reused_by_the_next_request(
    handler: OneHopASGIHandler,
) -> None:
    first = await get(handler, "/healthz")
    second = await get(handler, "/healthz")
    assert first[0]["status"] == second[0]["status"] == 200 and b"alive" in first[1]["body"]
    threads = {seen["thread"] for seen in SEEN}
    assert len(SEEN) == 4 and len(threads) == 1  # outermost and innermost middleware, two requests
    assert threads != {threading.get_ident()}  # not the event loop's


async def test_two_requests_at_once_run_on_two_threads(handler: OneHopASGIHandler) -> None:
    await asyncio.gather(get(handler, "/healthz"), get(handler, "/healthz"))
    assert len({seen["thread"] for seen in SEEN}) == 2


async def test_a_disconnect_after_the_answer_is_not_a_client_gone(
    handler: OneHopASGIHandler, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="apps.core.client_gone"):
        sent = await get(handler, "/healthz")
    assert sent[0]["status"] == 200
    assert not SEEN[0]["gone"].is_set() and "went away" not in caplog.text


async def test_a_disconnect_before_the_answer_sets_the_client_gone_event(
    handler: OneHopASGIHandler, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="apps.core.client_gone"):
        await get(handler, "/healthz", leave_early=True)
    assert SEEN[0]["gone"].is_set() and "client went away before the response: /healthz" in caplog.text


def test_a_thread_released_while_busy_goes_back_to_the_pool_only_when_its_work_ends() -> None:
    threads = RequestThreads()
    busy = threads.take()
    go_on = threading.Event()
    work = busy.submit(go_on.wait, 10)
    busy.release()  # the request is over (its view was cancelled) but the view runs on
    other = threads.take()
    assert other is not busy
    go_on.set()
    work.result(10)
    other.release()
    assert {threads.take(), threads.take()} == {busy, other}


def test_threads_past_the_idle_limit_end_after_a_burst() -> None:
    threads = RequestThreads(max_idle=2)
    burst = [threads.take() for _ in range(5)]
    for thread in burst:
        thread.submit(lambda: None).result(10)
    workers = [t for thread in burst for t in thread._threads]
    for thread in burst:
        thread.release()
    kept = {threads.take(), threads.take()}
    assert kept == set(burst[:2])  # the first two back are kept, the other three were shut down
    for worker in workers[2:]:
        worker.join(10)
    assert [worker.is_alive() for worker in workers] == [True, True, False, False, False]
