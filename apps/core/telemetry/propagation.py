"""The caller's trace: a W3C `traceparent` (and `tracestate`) received with a request makes the
service's spans children of the caller's span.

Carriers are HTTP headers (REST, SSE, the MCP endpoint), the WebSocket handshake's headers or a
query message's own fields. Only the W3C Trace Context is read, whatever `OTEL_PROPAGATORS` says:
baggage would let a caller put arbitrary values on our spans.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from apps.core.telemetry import spans

FIELDS = ("traceparent", "tracestate")
_W3C = TraceContextTextMapPropagator()


def asgi_carrier(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The trace context fields among an ASGI scope's headers (names are lower case there)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in headers if name in _ASGI_FIELDS}


_ASGI_FIELDS = frozenset(field.encode() for field in FIELDS)


@contextmanager
def continued(carrier: Mapping[str, str]) -> Iterator[None]:
    """Within this block, spans started without a current span of ours are children of the caller's.

    Nothing changes when tracing is off or the carrier holds no valid `traceparent` (a malformed one
    is ignored, as the W3C spec says: the service's spans then start a trace of their own).
    """
    if not spans.tracing() or "traceparent" not in carrier:
        yield
        return
    remote = _W3C.extract(carrier)
    if not trace.get_current_span(remote).get_span_context().is_valid:
        yield
        return
    token = otel_context.attach(remote)
    try:
        yield
    finally:
        otel_context.detach(token)


def carried() -> dict[str, str]:
    """The current span's trace context as carrier fields (empty when tracing is off or no span is
    current): what work handed to another thread or process takes along to be `continued` there."""
    carrier: dict[str, str] = {}
    if spans.tracing() and trace.get_current_span().get_span_context().is_valid:
        _W3C.inject(carrier)
    return carrier
