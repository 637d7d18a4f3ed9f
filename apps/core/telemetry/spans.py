"""The one door to OpenTelemetry's tracing: the process's tracer, operation and stage spans, flushing.

When tracing is off (the default) there is no tracer: `operation` hands back one shared empty context
manager and `stage_started` returns None, so a request pays one module-global check per span it would
have opened. When on, spans are batched in memory and exported by the SDK's own thread
(`BatchSpanProcessor`), never on the request's.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import Span, SpanKind, Tracer
from opentelemetry.util.types import AttributeValue

from apps.core.telemetry.config import TracingConfig, tracing_config

log = logging.getLogger(__name__)
SCOPE = "contextarch"  # the instrumentation scope of this service's spans
Attributes = Mapping[str, AttributeValue]

_tracer: Tracer | None = None
_provider: TracerProvider | None = None
_capture_content = False
_OFF: AbstractContextManager[None] = nullcontext()


def tracing_configure(environ: Mapping[str, str] | None = None, *, install_global: bool = False) -> bool:
    """Start (or stop) tracing as `environ` (default: the process's environment) says; True when on.

    The previous provider, if any, is flushed and shut down. `install_global` also makes it the
    process's global provider, so libraries that trace through the global API (the MCP SDK's
    `tools/call` spans) export through it too; that can be done once per process, at start.
    """
    global _tracer, _provider, _capture_content
    config = tracing_config(os.environ if environ is None else environ)
    provider = None if config is None else _provider_for(config)
    previous = _provider
    _provider, _capture_content = provider, bool(config and config.capture_content)
    _tracer = None if provider is None else provider.get_tracer(SCOPE)
    if previous is not None:
        previous.shutdown()
    if provider is not None and install_global:
        trace.set_tracer_provider(provider)
    if config is not None:
        log.info("tracing on: %s to %s as %s", ", ".join(config.exporters), config.endpoint, config.service_name)
    return provider is not None


def _provider_for(config: TracingConfig) -> TracerProvider:
    # The sampler, the batch sizes and the exporter's headers, timeout and compression are the SDK's
    # own OTEL_* readings (OTEL_TRACES_SAMPLER, OTEL_BSP_*, OTEL_EXPORTER_OTLP_HEADERS, ...).
    provider = TracerProvider(resource=Resource.create({"service.name": config.service_name}))
    for name in config.exporters:
        exporter: SpanExporter
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter(endpoint=config.endpoint)
        else:
            exporter = ConsoleSpanExporter()
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def tracing() -> bool:
    """Whether spans are being recorded in this process."""
    return _tracer is not None


def content_captured() -> bool:
    """Whether spans may carry text (the query, the chunks), redacted: the GenAI conventions' opt-in."""
    return _capture_content


def operation(
    name: str, attributes: Attributes | None = None, *, kind: SpanKind = SpanKind.INTERNAL
) -> AbstractContextManager[Span | None]:
    """A span around one operation, current while it runs (its stages become its children), ended
    with an error status if it raises; yields None when tracing is off."""
    if _tracer is None:
        return _OFF
    return _tracer.start_as_current_span(name, kind=kind, attributes=attributes)


def stage_started(name: str) -> Span | None:
    """A child span of the current one for a stage; the caller ends it. None when tracing is off."""
    if _tracer is None:
        return None
    return _tracer.start_span(name, attributes={"contextarch.stage": name})


def client_span(name: str, attributes: Attributes | None = None) -> Span | None:
    """A CLIENT span (a call this service makes to another: a proxied model call), a child of the
    current span, started now; the caller ends it, on any thread. None when tracing is off."""
    if _tracer is None:
        return None
    return _tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)


def tracing_flush(timeout_ms: int = 5000) -> bool:
    """Export every span ended so far (tests, shutdown); True when none is left waiting."""
    return True if _provider is None else _provider.force_flush(timeout_ms)


def span_attributes(span: Span, attributes: Mapping[str, Any]) -> None:
    """Set the attributes that have a value (None is left out: an attribute is absent, never null)."""
    span.set_attributes({key: value for key, value in attributes.items() if value is not None})
