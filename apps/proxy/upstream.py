"""The one door to the upstream LLM servers: an HTTP call that streams, on the server's event loop.

One `httpx.AsyncClient` per event loop keeps connections to the upstreams open between calls. An
upstream that cannot be reached answers 502 `upstream_unreachable`, one that does not answer in
time 504 `upstream_timeout`; any answer it does give (429, 500, ...) goes back to the client as it
came. Nothing here logs a header: the key leaves only in the request to the upstream.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import httpx
from django.conf import settings

from apps.core.deadline import Cancelled
from apps.core.errors import DomainError
from apps.proxy.errors import UPSTREAM_TIMEOUT, UPSTREAM_UNREACHABLE
from apps.proxy.upstream_keys import Target

T = TypeVar("T")

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()

# Answer headers that reach the client (rate limits, request ids); the rest are the proxy's own.
PASSED_HEADERS = ("content-type", "retry-after", "x-request-id", "request-id")
PASSED_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "openai-")
SENT_HEADERS = ("anthropic-version", "anthropic-beta", "openai-organization", "openai-project")


class UpstreamFailed(DomainError):
    """No answer from the upstream: unreachable (502) or too slow (504)."""

    status = 502
    code = UPSTREAM_UNREACHABLE.code


class UpstreamTimeout(UpstreamFailed):
    status = 504
    code = UPSTREAM_TIMEOUT.code


def _client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        timeout = httpx.Timeout(settings.PROXY_UPSTREAM_TIMEOUT_S, connect=settings.PROXY_CONNECT_TIMEOUT_S)
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        client = _clients[loop] = httpx.AsyncClient(timeout=timeout, limits=limits, follow_redirects=False)
    return client


def upstream_headers(target: Target, incoming: dict[str, str]) -> dict[str, str]:
    """The headers sent upstream: the format's own auth header with the key, and the provider's options."""
    headers = {"content-type": "application/json", "accept-encoding": "identity"}
    headers.update({name: incoming[name] for name in SENT_HEADERS if incoming.get(name)})
    if target.kind == "anthropic":
        headers.setdefault("anthropic-version", "2023-06-01")
        if target.key:
            headers["x-api-key"] = target.key
    elif target.key:
        headers["authorization"] = f"Bearer {target.key}"
    return headers


def passed_headers(response: httpx.Response) -> dict[str, str]:
    return {
        name: value
        for name, value in response.headers.items()
        if name.lower() in PASSED_HEADERS or name.lower().startswith(PASSED_PREFIXES)
    }


async def upstream_open(
    *, target: Target, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> httpx.Response:
    """Send the call and wait for the answer's status and headers; its body is read by the caller."""
    request = _client().build_request(method, target.base_url + path, content=body, headers=headers)
    try:
        return await _client().send(request, stream=True)
    except httpx.TimeoutException as exc:
        raise UpstreamTimeout(f"the {target.kind} upstream did not answer in time") from exc
    except httpx.HTTPError as exc:
        raise UpstreamFailed(f"the {target.kind} upstream cannot be reached ({type(exc).__name__})") from exc


async def until_gone(work: Coroutine[Any, Any, T], gone: Callable[[], bool] | None) -> T:
    """Run `work`, cancelled as soon as the client has gone (checked ten times a second)."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=0.1)
        if done:
            return task.result()
        if gone is not None and gone():
            task.cancel()
            raise Cancelled("the upstream's answer")
