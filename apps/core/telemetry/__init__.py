"""OpenTelemetry tracing of the service's operations (off unless the OTEL_* environment asks for it).

- `config.py`: what the standard environment variables ask for (exporter, endpoint, service name,
  the content opt-in), or None: off;
- `spans.py`: the process's tracer, `operation` spans (assembly, history search) and their stage
  children, `client_span` (a proxied model call), flushing; the only module that builds a provider;
- `propagation.py`: a caller's W3C `traceparent` (headers, a WebSocket message, a background
  task's argument) continued;
- `middleware.py`: one SERVER span per HTTP request, a child of the caller's.

Higher apps call these; the span names and attributes of their operations are theirs
(apps/assembly/spans.py).
"""

from __future__ import annotations

from apps.core.telemetry.propagation import FIELDS as TRACE_FIELDS
from apps.core.telemetry.propagation import asgi_carrier, carried, continued
from apps.core.telemetry.spans import (
    client_span,
    content_captured,
    operation,
    span_attributes,
    stage_started,
    tracing,
    tracing_configure,
    tracing_flush,
)

__all__ = [
    "TRACE_FIELDS",
    "asgi_carrier",
    "carried",
    "client_span",
    "content_captured",
    "continued",
    "operation",
    "span_attributes",
    "stage_started",
    "tracing",
    "tracing_configure",
    "tracing_flush",
]
