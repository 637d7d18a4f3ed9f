"""Prometheus metrics of the service, in one registry exposed at /metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

HTTP_REQUESTS = Counter(
    "context_architect_http_requests",
    "HTTP requests served, by method, route and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
ASSEMBLY_LATENCY = Histogram(
    "context_architect_assembly_latency_ms",
    "Context assembly latency in milliseconds.",
    buckets=(5, 10, 25, 50, 75, 100, 150, 250, 500, 1000, 2500, 5000),
    registry=REGISTRY,
)
ASSEMBLY_TOKENS = Histogram(
    "context_architect_assembly_tokens_used",
    "Tokens in each assembled context.",
    buckets=(100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000),
    registry=REGISTRY,
)
ITEMS_EMBEDDED = Counter(
    "context_architect_items_embedded",
    "Items embedded by the background embedder.",
    registry=REGISTRY,
)
