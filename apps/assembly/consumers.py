"""WebSocket `/ws/v1/context/`: `{"type": "query", ...fields}` in; `chunk` events, then `complete`, out.

The fields are those of the JSON body of `POST /api/v1/context/` (at the top level, or under
`options` as in the POST body), validated by the same serializer. Authenticated by the Bearer header or
a first `{"type": "auth", "api_key": ...}` message (never the URL; see workspaces/ws_auth.py); the
key is checked on every message and needs the `read` scope. Bad input answers
`{"type": "error", "error": {...}}` and the connection stays open for the next query; only a
missing, bad or revoked key closes it (4401).
An optional `id` in a query is echoed on each of its events. An optional `traceparent` (and
`tracestate`) in a query, or else on the handshake's headers, makes its assembly's span a child of
the caller's (W3C Trace Context; tracing is off unless configured: apps/core/telemetry).

Queries (and the errors of bad ones) are answered one at a time, in the order sent, by a task of
the connection's own, so the consumer keeps reading while a query is assembled: a client that
disconnects meanwhile is seen at once, and its query stops at its next stage boundary
(AssemblyCancelled: counted in /metrics, nothing recorded or cached), as a blocking request's
does. Up to QUEUED messages wait their turn; past that the consumer stops reading until one is
answered.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from rest_framework.exceptions import ValidationError

from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.errors import INVALID_OPTIONS
from apps.assembly.streaming import StreamEvent, context_events, context_params
from apps.core import telemetry
from apps.core.errors import INVALID_INPUT, DomainError, InvalidInput
from apps.core.exceptions import api_exception_handler, error_body
from apps.core.field_errors import INVALID_MESSAGE
from apps.workspaces.authentication import ApiClient
from apps.workspaces.ws_auth import ApiKeyConsumer

log = logging.getLogger(__name__)

QUEUED = 8
INTERNAL_ERROR = 1011  # RFC 6455: the server met an unexpected condition


class ContextConsumer(ApiKeyConsumer):
    _queue: asyncio.Queue[tuple[ApiClient, Any]] | None = None
    _answering: asyncio.Task[None] | None = None
    _gone: threading.Event | None = None

    async def handle(self, client: ApiClient, content: Any) -> None:
        if self._queue is None:
            self._queue, self._gone = asyncio.Queue(QUEUED), threading.Event()
            self._answering = asyncio.create_task(self._answer_in_turn(self._queue, self._gone))
        await self._queue.put((client, content))

    async def disconnect(self, code: int) -> None:
        await super().disconnect(code)
        if self._gone is None or self._answering is None:
            return
        self._gone.set()  # a query being assembled stops at its next stage boundary
        if not self._answering.done() and self._answering.cancel():
            log.info("websocket client went away (code %s): its query stops at its next stage", code)

    async def _answer_in_turn(self, queue: asyncio.Queue[tuple[ApiClient, Any]], gone: threading.Event) -> None:
        while True:
            client, content = await queue.get()
            try:
                await self._answer(client, content, gone)
            except Exception:  # as an error in a consumer's handler does: logged, the socket closed
                log.exception("websocket query failed")
                await self.close(code=INTERNAL_ERROR)
                return

    async def _answer(self, client: ApiClient, content: Any, gone: threading.Event) -> None:
        if not isinstance(content, dict) or content.get("type") != "query":
            message = 'send {"type": "query", "layer": ..., "query": ...}'
            await self.send_json({"type": "error", **error_body(INVALID_MESSAGE.code, message)})
            return
        echo = {"id": content["id"]} if "id" in content else {}
        try:
            # Not thread-sensitive: Channels gives a consumer no thread of its own, so that would be the
            # one thread every WebSocket of the process shares, and one long query would hold them all.
            trace = telemetry.asgi_carrier(self.scope.get("headers", []))
            events = await sync_to_async(_events, thread_sensitive=False)(client, content, gone, trace)
        except AssemblyCancelled:
            return  # the client has gone: nobody to answer
        except (DomainError, ValidationError) as exc:
            response = api_exception_handler(exc, {})  # the REST API's codes and messages
            body = response.data if response is not None else error_body(INVALID_INPUT.code, str(exc))
            await self.send_json({"type": "error", **echo, **body})
            return
        for event in events:
            await self.send_json({"type": event["type"], **echo, "data": event["data"]})


# A query's own fields that are not the context request's.
MESSAGE_FIELDS = ("type", "id", "options", *telemetry.TRACE_FIELDS)


def _events(
    client: ApiClient, content: dict[str, Any], gone: threading.Event, trace: dict[str, str]
) -> list[StreamEvent]:
    try:
        options = content.get("options") or {}
        if not isinstance(options, dict):
            raise InvalidInput("`options` must be an object", code=INVALID_OPTIONS)
        fields = {key: value for key, value in content.items() if key not in MESSAGE_FIELDS}
        params = context_params(request={**options, **fields})
        with telemetry.continued(_trace_carrier(content) or trace):
            return context_events(
                workspace=client.workspace, params=params, api_key=client.api_key, cancelled=gone.is_set
            )
    finally:
        # Here, in the call's own context where its connection lives (Django keeps connections in
        # context variables): back to the pool even when nobody awaits this call any more (a cancel).
        close_old_connections()


def _trace_carrier(content: dict[str, Any]) -> dict[str, str]:
    """The trace context a query message carries itself (strings only; anything else is ignored)."""
    return {name: value for name in telemetry.TRACE_FIELDS if isinstance(value := content.get(name), str)}
