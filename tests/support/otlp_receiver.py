"""A local OTLP/HTTP receiver: what an OpenTelemetry collector would get from the service.

A small HTTP server in the test process that answers `POST /v1/traces` as a collector does and
decodes each body (a protobuf `ExportTraceServiceRequest`, gzip or not) into `ReceivedSpan`s.
"""

from __future__ import annotations

import gzip
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.support.live import PORTS, port_free_in
from tests.support.waiting import wait_until


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, ids in hex as a `traceparent` writes them."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str  # "" for a root span
    kind: str  # "SPAN_KIND_SERVER", "SPAN_KIND_INTERNAL", ...
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    start_ns: int
    end_ns: int
    service: str
    scope: str

    @property
    def ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [_value(v) for v in value.array_value.values]
    return None if which is None else getattr(value, which)


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs if isinstance(pair, KeyValue)}


def decoded(body: bytes) -> list[ReceivedSpan]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    for resource_spans in request.resource_spans:
        service = str(_attributes(resource_spans.resource.attributes).get("service.name", ""))
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(
                    ReceivedSpan(
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        kind=Span.SpanKind.Name(span.kind),
                        attributes=_attributes(span.attributes),
                        events=[(event.name, _attributes(event.attributes)) for event in span.events],
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        service=service,
                        scope=scope_spans.scope.name,
                    )
                )
    return out


class OtlpReceiver:
    """The spans received so far (`spans`), and a wait for those of one trace."""

    def __init__(self, url: str) -> None:
        self.url = url  # the base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT takes it
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self.lock = threading.Lock()

    def received(self, spans: list[ReceivedSpan]) -> None:
        with self.lock:
            self.spans.extend(spans)
            self.requests += 1

    def of_trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self.lock:
            return [s for s in self.spans if s.trace_id == trace_id]

    def wait_for(
        self, trace_id: str, ready: Callable[[list[ReceivedSpan]], bool], timeout: float = 30
    ) -> list[ReceivedSpan]:
        """The spans of `trace_id` once `ready(spans)` holds (spans arrive in batches, in any order)."""

        def check() -> list[ReceivedSpan] | None:
            spans = self.of_trace(trace_id)
            return spans if ready(spans) else None

        return wait_until(check, timeout=timeout, what=f"the spans of trace {trace_id}")


@contextmanager
def otlp_receiver() -> Iterator[OtlpReceiver]:
    """A receiver listening on a free port of this suite's range until the block ends."""
    port = port_free_in(PORTS)
    receiver = OtlpReceiver(f"http://127.0.0.1:{port}")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            if self.path != "/v1/traces":
                self.send_error(404)
                return
            receiver.received(decoded(body))
            payload = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Caller:
    """An agent's span that calls the service: its ids and the `traceparent` that carries them (sampled)."""

    trace_id: str
    span_id: str

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-01"


def a_caller() -> Caller:
    return Caller(trace_id=secrets.token_hex(16), span_id=secrets.token_hex(8))


def named(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    """The one span called `name`."""
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> list[ReceivedSpan]:
    return [s for s in spans if s.parent_span_id == parent.span_id]
