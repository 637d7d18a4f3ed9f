"""Prometheus metrics of the service, in one registry exposed at /metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

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
ASSEMBLY_LAYERS = Histogram(
    "context_architect_assembly_layers_included",
    "Distinct layers contributing to each assembled context.",
    buckets=(0, 1, 2, 3, 4, 6, 8, 12, 20),
    registry=REGISTRY,
)
ASSEMBLY_CACHE = Counter(
    "context_architect_assembly_cache",
    "Context requests answered from the assembly cache (hit) or assembled (miss).",
    ["result"],
    registry=REGISTRY,
)


def _hit_rate() -> float:
    hits = ASSEMBLY_CACHE.labels(result="hit")._value.get()
    misses = ASSEMBLY_CACHE.labels(result="miss")._value.get()
    return hits / (hits + misses) if hits + misses else 0.0


ASSEMBLY_CACHE_HIT_RATE = Gauge(
    "context_architect_assembly_cache_hit_rate",
    "Share of context requests answered from the assembly cache since the process started.",
    registry=REGISTRY,
)
ASSEMBLY_CACHE_HIT_RATE.set_function(_hit_rate)
