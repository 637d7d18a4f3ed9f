"""Tracing's configuration, read from the standard OpenTelemetry environment variables.

Off unless asked for: tracing starts only when `OTEL_TRACES_EXPORTER` names an exporter, or an OTLP
endpoint is given (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`);
`OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keeps it off whatever else is set. Spans go
over OTLP/HTTP with protobuf bodies (the only protocol installed); a bad value is a configuration
error at start, not a silent loss of every span.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

EXPORTERS = ("otlp", "console")
DEFAULT_SERVICE_NAME = "context-architect"
DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
# The GenAI conventions' opt-in for content (query text, chunk text) on spans; off by default.
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class TracingConfig:
    """Where spans go and what they may hold."""

    exporters: tuple[str, ...]  # "otlp", "console"
    endpoint: str  # the OTLP/HTTP traces URL
    service_name: str
    capture_content: bool  # the query's and the chunks' text on spans (redacted), as the GenAI opt-in says


def tracing_config(environ: Mapping[str, str]) -> TracingConfig | None:
    """The configuration `environ` asks for, or None when tracing is off."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return None
    endpoint = _endpoint(environ)
    named = [part.strip().lower() for part in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if part.strip()]
    exporters = tuple(named) if named else (("otlp",) if endpoint else ())
    if not exporters or exporters == ("none",):
        return None
    unknown = sorted(set(exporters) - set(EXPORTERS))
    if unknown:
        raise ImproperlyConfigured(f"OTEL_TRACES_EXPORTER: {', '.join(unknown)} is not one of {', '.join(EXPORTERS)}")
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol.strip() != "http/protobuf":
        raise ImproperlyConfigured(f"OTEL_EXPORTER_OTLP_PROTOCOL: only http/protobuf is supported, got {protocol!r}")
    return TracingConfig(
        exporters=exporters,
        endpoint=endpoint or DEFAULT_ENDPOINT + TRACES_PATH,
        service_name=environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME,
        capture_content=environ.get(CAPTURE_CONTENT, "").strip().lower() in _TRUE,
    )


def _endpoint(environ: Mapping[str, str]) -> str:
    """The traces URL: the signal's own endpoint as given, else the base endpoint + /v1/traces (the spec's rule)."""
    if own := environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return own
    if base := environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        return base.rstrip("/") + TRACES_PATH
    return ""
