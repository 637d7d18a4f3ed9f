"""The request span: named by the route pattern, never by the path a secret may travel in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client

from apps.core import telemetry
from tests.support.otlp_receiver import OtlpReceiver, a_caller, otlp_receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with otlp_receiver() as r:
        assert telemetry.tracing_configure({"OTEL_EXPORTER_OTLP_ENDPOINT": r.url})
        try:
            yield r
        finally:
            telemetry.tracing_configure({})


def test_an_invitation_links_token_is_never_on_its_span(receiver: OtlpReceiver) -> None:
    caller, token = a_caller(), "inv-" + "k3y" * 12

    Client().get(f"/invite/{token}/", HTTP_TRACEPARENT=caller.traceparent)

    assert telemetry.tracing_flush()
    (span,) = receiver.wait_for(caller.trace_id, bool)
    assert span.name == "GET /invite/<str:token>/" and span.attributes["http.route"] == "/invite/<str:token>/"
    assert span.parent_span_id == caller.span_id
    assert token not in str(span)


def test_the_prometheus_scrape_is_not_traced(receiver: OtlpReceiver) -> None:
    caller = a_caller()

    assert Client().get("/metrics", HTTP_TRACEPARENT=caller.traceparent).status_code == 200

    assert telemetry.tracing_flush()
    assert receiver.of_trace(caller.trace_id) == []
