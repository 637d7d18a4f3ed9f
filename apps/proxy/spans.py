"""The span of a proxied model call, on the GenAI semantic conventions.

One CLIENT span per call the proxy forwards, named `chat {model}` as the conventions name an
inference span, a child of the request's SERVER span (and so of the caller's `traceparent`): from
the moment the request leaves for the upstream until its last byte came back (a stream's last
event), or it failed, or the client left. Its attributes: `gen_ai.operation.name=chat`,
`gen_ai.provider.name` (the wire format: openai or anthropic), `gen_ai.request.model`,
`gen_ai.request.max_tokens`, the usage the upstream reported (`gen_ai.usage.input_tokens`,
`gen_ai.usage.output_tokens`), `server.address` / `server.port` (the upstream's host, never its
path, query or credentials), the status, `error.type` when it failed, and this service's own
figures: the context it injected (`contextarch.context_tokens`), the prompt as it counted it
(`contextarch.prompt_tokens`), the time to the first byte, the assembly's trace id. Never the key,
the prompt or the reply's text.
"""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.trace import Span, Status, StatusCode

from apps.core import telemetry
from apps.proxy.calls import Prepared
from apps.proxy.upstream_keys import Target
from apps.proxy.wire import Reply, Wire


class ModelCall:
    """A proxied call's span, ended once (by the call's end, its failure or the client leaving)."""

    def __init__(self, span: Span | None) -> None:
        self._span = span
        self._lock = threading.Lock()

    def end(
        self,
        *,
        status: int | None,
        reply: Reply | None = None,
        first_byte_ms: float | None = None,
        error: str | None = None,
    ) -> None:
        with self._lock:
            span, self._span = self._span, None
        if span is None:
            return
        telemetry.span_attributes(
            span,
            {
                "http.response.status_code": status,
                "gen_ai.usage.input_tokens": reply.prompt_tokens if reply else None,
                "gen_ai.usage.output_tokens": reply.completion_tokens if reply else None,
                "contextarch.first_byte_ms": first_byte_ms,
                "contextarch.reply_complete": reply.complete if reply else None,
            },
        )
        failure = error or (str(status) if status is not None and status >= 400 else None)
        if failure is not None:
            span.set_attribute("error.type", failure)
            span.set_status(Status(StatusCode.ERROR))
        span.end()


def model_call_started(*, wire: Wire, target: Target, prepared: Prepared, stream: bool) -> ModelCall:
    """The call's span, started now under the current span (an inert ModelCall when tracing is off)."""
    if not telemetry.tracing():
        return ModelCall(None)
    address = urlsplit(target.base_url)
    body: dict[str, Any] = prepared.body
    max_tokens = body.get("max_tokens", body.get("max_completion_tokens", body.get("max_output_tokens")))
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": wire.kind,
        "gen_ai.request.model": prepared.model or None,
        "gen_ai.request.max_tokens": max_tokens if isinstance(max_tokens, int) else None,
        "server.address": address.hostname,
        "server.port": address.port,
        "contextarch.stream": stream,
        "contextarch.context_tokens": prepared.context_tokens,
        "contextarch.prompt_tokens": prepared.sent_count.tokens if prepared.sent_count else None,
        "contextarch.trace_id": prepared.trace_id or None,
    }
    name = f"chat {prepared.model}" if prepared.model else "chat"
    span = telemetry.client_span(name, {k: v for k, v in attributes.items() if v is not None})
    return ModelCall(span)
