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
ASSEMBLIES_CANCELLED = Counter(
    "context_architect_assemblies_cancelled",
    "Assemblies stopped at a stage boundary because their caller cancelled (e.g. the stream's client left), "
    "by the stage they stopped before; nothing of them was recorded or cached.",
    ["stage"],
    registry=REGISTRY,
)
OVERLOADED = Counter(
    "context_architect_overloaded",
    "Requests answered `overloaded` (issue 26): no pooled database connection free in time (database_pool, "
    "503) or no slot of their workspace's share of the worker (workspace_share, 429) or of the machine "
    "(machine_share, 429); all with Retry-After.",
    ["reason"],
    registry=REGISTRY,
)

REPLICA_READS = Counter(
    "context_architect_replica_reads",
    "Read decisions with DATABASE_REPLICA_URLS (apps/core/replicas.py): replica (caught up, chosen), "
    "replica_behind and replica_down (one replica asked and passed over), primary (none caught up).",
    ["result"],
    registry=REGISTRY,
)

ASSEMBLY_PARTS_SKIPPED = Counter(
    "context_architect_assembly_parts_skipped",
    "Parts of context assemblies that failed and were left out, the rest answered (a candidate that could "
    "not be built, ranked or packed; a candidate source; a search), by kind of part.",
    ["part"],
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

# --- Summaries (issue 4) ---
SUMMARY_GENERATION_TIME = Histogram(
    "context_architect_summary_generation_time_ms",
    "Time to generate one layer's summaries (all depths), in milliseconds, by layer kind and provider.",
    ["layer_kind", "provider"],
    buckets=(1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000),
    registry=REGISTRY,
)
SUMMARY_GENERATIONS = Counter(
    "context_architect_summary_generations_total",
    "Summaries generated, by layer kind, depth and provider.",
    ["layer_kind", "depth", "provider"],
    registry=REGISTRY,
)
SUMMARY_SKIPS = Counter(
    "context_architect_summary_skips",
    "Summary regenerations skipped, by reason (unchanged source, no content).",
    ["reason"],
    registry=REGISTRY,
)
SUMMARY_FALLBACKS = Counter(
    "context_architect_summary_fallbacks",
    "Summaries served by a fallback after the LLM failed (stale cached summary, truncated raw content) "
    "or the extractive provider used because the daily budget was spent.",
    ["kind"],
    registry=REGISTRY,
)
SUPERSESSION_JUDGE_FALLBACKS = Counter(
    "context_architect_supersession_judge_fallbacks",
    "Supersession candidates left to the rule-based detector because the configured LLM could not judge "
    "them, by reason (budget: the day's LLM budget was spent; failed: the call failed or its reply was unreadable).",
    ["reason"],
    registry=REGISTRY,
)
CACHE_HITS = Counter(
    "context_architect_cache_hits",
    "Summary reads answered by the Redis cache.",
    registry=REGISTRY,
)
CACHE_MISSES = Counter(
    "context_architect_cache_misses",
    "Summary reads that fell back to PostgreSQL (and repopulated the cache).",
    registry=REGISTRY,
)
LLM_RETRIES = Counter(
    "context_architect_llm_retries",
    "Retries of failed LLM summarization calls.",
    registry=REGISTRY,
)
LLM_FAILURE_ALERTS = Counter(
    "context_architect_llm_failure_alerts",
    "Alerts raised for repeated LLM summarization failures in a workspace.",
    registry=REGISTRY,
)

# --- Attempts, error patterns and redaction (issue 5) ---
REDACTION_FINDINGS = Counter(
    "context_architect_redaction_findings",
    "Secrets and personal data redacted from agent text before storage, by type.",
    ["type"],
    registry=REGISTRY,
)
ATTEMPTS_RECORDED = Counter(
    "context_architect_attempts_recorded",
    "Agent attempts reported, by outcome.",
    ["outcome"],
    registry=REGISTRY,
)
ERROR_PATTERNS_CAPTURED = Counter(
    "context_architect_error_patterns_captured",
    "Error patterns captured from a failure followed by a success (new pattern or a new occurrence).",
    ["kind"],
    registry=REGISTRY,
)
ERROR_HINTS_INJECTED = Counter(
    "context_architect_error_hints_injected",
    "Known-fix hints included in assembled contexts.",
    registry=REGISTRY,
)
ERROR_PATTERNS_EXPIRED = Counter(
    "context_architect_error_patterns_expired",
    "Error patterns removed by the TTL sweep.",
    registry=REGISTRY,
)
