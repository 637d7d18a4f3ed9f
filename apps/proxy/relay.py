"""Forwarding a prepared call and relaying the upstream's answer: whole, or as its events arrive.

A streamed answer is passed on event by event as the upstream sends it (nothing waits for the whole
answer); the events are read on the way to collect the reply and the usage, stored after the last
one. A client that leaves mid-stream closes the upstream call with it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from asgiref.sync import async_to_sync
from django.db import connections
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse

from apps.proxy.calls import Prepared, call_finish
from apps.proxy.spans import model_call_started
from apps.proxy.upstream import UpstreamFailed, passed_headers, until_gone, upstream_headers, upstream_open
from apps.proxy.upstream_keys import Target
from apps.proxy.wire import Reply, Wire, sse_data, sse_events
from apps.workspaces.models import Workspace

# The reply and the call are stored here, after the answer has gone: the client never waits for them.
_finishing = ThreadPoolExecutor(max_workers=4, thread_name_prefix="proxy-finish")


def _detached(work: Callable[[], None]) -> None:
    def run() -> None:
        try:
            work()
        finally:
            connections.close_all()  # this thread's own connections

    _finishing.submit(run)


def warning_header(warnings: list[str]) -> str:
    """RFC 9111's `Warning` syntax, one `199` per warning, in characters a header can carry."""
    cleaned = (warning_safe(w).replace('"', "'").replace("\\", "/") for w in warnings)
    return ", ".join(f'199 contextarch "{w[:500]}"' for w in cleaned)


def _ours(response: HttpResponseBase, prepared: Prepared) -> None:
    if prepared.trace_id:
        response["X-Context-Trace-Id"] = prepared.trace_id
    response["X-Context-Tokens"] = str(prepared.context_tokens)
    if prepared.session is not None and prepared.session.external_id:
        response["X-Context-Session"] = warning_safe(prepared.session.external_id)
    if prepared.warnings:
        response["Warning"] = warning_header(prepared.warnings)


def warning_safe(value: str) -> str:
    return "".join(c if " " <= c <= "~" else "?" for c in value)


async def read_whole(response: httpx.Response) -> bytes:
    try:
        return await response.aread()
    finally:
        await response.aclose()


def _elapsed(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def relay(
    *,
    workspace: Workspace,
    wire: Wire,
    target: Target,
    prepared: Prepared,
    stream: bool,
    incoming: dict[str, str],
    gone: Callable[[], bool] | None,
) -> HttpResponseBase:
    """Send the prepared call upstream and answer with what comes back (its status, body and events)."""
    body, drop = wire.prepare_stream(prepared.body) if stream else (prepared.body, False)
    payload = json.dumps(body, ensure_ascii=False).encode()
    headers = upstream_headers(target, incoming)
    call = model_call_started(wire=wire, target=target, prepared=prepared, stream=stream)
    sent = time.perf_counter()

    def finish(status: int, reply: Reply | None, first_byte: float | None, last_byte: float | None) -> None:
        call.end(status=status, reply=reply, first_byte_ms=first_byte)
        call_finish(
            workspace=workspace,
            wire=wire,
            prepared=prepared,
            upstream_url=target.base_url,
            status=status,
            reply=reply,
            stream=stream,
            first_byte_ms=first_byte,
            upstream_ms=last_byte,
        )

    opening = upstream_open(target=target, method="POST", path=wire.path, body=payload, headers=headers)
    try:
        response = async_to_sync(until_gone)(opening, gone)
    except UpstreamFailed as exc:
        call.end(status=exc.status, error=exc.code)
        finish(exc.status, None, None, _elapsed(sent))
        raise
    except BaseException as exc:  # the client left (Cancelled) or anything else: the span says so
        call.end(status=None, error=getattr(exc, "code", type(exc).__name__))
        raise
    first_byte = _elapsed(sent)
    kind = response.headers.get("content-type", "")
    if not stream or response.status_code >= 400 or not kind.startswith("text/event-stream"):
        try:
            content = async_to_sync(until_gone)(read_whole(response), gone)
        except BaseException as exc:
            call.end(status=response.status_code, error=getattr(exc, "code", type(exc).__name__))
            raise
        reply = _whole_reply(wire, content) if response.status_code < 400 else None
        last_byte = _elapsed(sent)
        _detached(lambda: finish(response.status_code, reply, first_byte, last_byte))
        answer: HttpResponseBase = HttpResponse(content, status=response.status_code, content_type=kind or None)
    else:

        def ended(reply: Reply) -> None:
            last_byte = _elapsed(sent)
            _detached(lambda: finish(response.status_code, reply, first_byte, last_byte))

        def left(why: str) -> None:
            call.end(status=response.status_code, first_byte_ms=first_byte, error=why)

        answer = StreamingHttpResponse(
            _events(response, wire, drop, ended, left), status=response.status_code, content_type=kind
        )
        answer["Cache-Control"] = "no-cache"
        answer["X-Accel-Buffering"] = "no"
    for name, value in passed_headers(response).items():
        if name.lower() != "content-type":
            answer[name] = value
    _ours(answer, prepared)
    return answer


def _whole_reply(wire: Wire, content: bytes) -> Reply | None:
    try:
        answer = json.loads(content)
    except ValueError:
        return None
    return wire.reply_of(answer) if isinstance(answer, dict) else None


async def _events(
    response: httpx.Response, wire: Wire, drop: bool, ended: Callable[[Reply], None], left: Callable[[str], None]
) -> AsyncIterator[bytes]:
    """The upstream's events as they arrive (each whole: an event is never split), read on the way;
    `left` is told why when the stream stops before its end (the client went, the upstream broke off)."""
    reply = Reply()
    buffer = bytearray()
    try:
        async for piece in response.aiter_bytes():
            buffer += piece
            out = [event for event in sse_events(buffer) if _keep(wire, reply, event, drop)]
            if out:
                yield b"".join(out)
        if buffer:
            yield bytes(buffer)
    except (GeneratorExit, asyncio.CancelledError):
        left("client_gone")
        raise
    except Exception as exc:
        left(type(exc).__name__)
        raise
    finally:
        await response.aclose()
    ended(reply)


def _keep(wire: Wire, reply: Reply, event: bytes, drop: bool) -> bool:
    data = sse_data(event)
    if data is None or data == "[DONE]":
        return True
    try:
        parsed: Any = json.loads(data)
    except ValueError:
        return True
    if not isinstance(parsed, dict):
        return True
    return wire.feed(reply, parsed) or not drop
