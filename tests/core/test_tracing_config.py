"""Tracing reads the standard OTEL_* variables: off unless asked for, and loud about what it cannot do."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from apps.core.telemetry.config import TracingConfig, tracing_config


def test_it_is_off_by_default() -> None:
    assert tracing_config({}) is None
    assert tracing_config({"OTEL_SERVICE_NAME": "ca"}) is None  # a name alone sends nothing anywhere


def test_an_endpoint_turns_it_on_with_the_traces_path_added() -> None:
    config = tracing_config({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"})

    assert config == TracingConfig(
        exporters=("otlp",),
        endpoint="http://collector:4318/v1/traces",
        service_name="context-architect",
        capture_content=False,
    )


def test_the_signals_own_endpoint_is_taken_as_given() -> None:
    config = tracing_config(
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:9/traces"}
    )

    assert config is not None and config.endpoint == "http://b:9/traces"


def test_a_named_exporter_turns_it_on_at_the_default_endpoint_with_the_service_name() -> None:
    config = tracing_config({"OTEL_TRACES_EXPORTER": "otlp,console", "OTEL_SERVICE_NAME": "ca-eu"})

    assert config is not None
    assert config.exporters == ("otlp", "console") and config.endpoint == "http://localhost:4318/v1/traces"
    assert config.service_name == "ca-eu"


@pytest.mark.parametrize(
    "environ",
    [
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_TRACES_EXPORTER": "none"},
    ],
)
def test_disabled_or_none_keeps_it_off_whatever_else_is_set(environ: dict[str, str]) -> None:
    assert tracing_config(environ) is None


def test_content_is_captured_only_on_the_genai_opt_in() -> None:
    on = tracing_config({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})

    assert on is not None and on.capture_content


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin is not one of otlp, console"),
        ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "only http/protobuf"),
    ],
)
def test_what_it_cannot_do_is_a_configuration_error(environ: dict[str, str], message: str) -> None:
    with pytest.raises(ImproperlyConfigured, match=message):
        tracing_config(environ)
