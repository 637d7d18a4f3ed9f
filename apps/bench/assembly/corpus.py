"""The synthetic content and the requests of the benchmark.

Item vectors are real e5 passage embeddings of a few hundred distinct passages, jittered per item,
so the HNSW index sees a realistic distribution without embedding every row (embedding 100k
passages on a CPU takes far longer than what is being measured). Query vectors are real e5 query
embeddings of varied questions, jittered per request. Every query text carries its own ticket
number, so no two requests are identical (no answer comes from the assembly cache) and every text
request embeds its query; no item says "ticket", so the suffix adds no keyword matches.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from apps.core import embeddings

SUBJECTS = (
    "billing", "deployments", "search", "the mobile app", "backups", "onboarding", "latency", "the cache",
    "payments", "auth", "the data warehouse", "alerts", "the API gateway", "invoices", "the scheduler",
    "the export job", "feature flags", "the CDN", "email delivery", "the admin console", "rate limiting",
    "the ingestion pipeline", "SSO", "the audit log", "webhooks", "the iOS build", "staging", "the message queue",
    "report generation", "the recommendation model",
)  # fmt: skip
FACTS = (
    "fails when the queue is full", "was migrated to PostgreSQL last quarter", "needs a review every Friday",
    "is owned by the platform team", "retries three times with exponential backoff",
    "has a 99.9% availability target", "logs every request with a trace id", "is documented in the runbook",
    "depends on Redis for locks", "must stay under 100 ms at p95", "was rewritten in Go",
    "has flaky integration tests", "times out under heavy load", "is behind a feature flag for EU customers",
    "pages the on-call engineer after five errors", "caches results for ten minutes",
    "was rolled back after the last release", "reads its settings from environment variables",
    "shards data by customer id", "leaks memory when a connection drops",
)  # fmt: skip
DETAILS = (
    "Raised by Priya in standup.", "See OPS-{n}.", "Confirmed in the incident review.",
    "Marco will follow up next sprint.", "Customers noticed it on Monday.", "Measured on build {n}.",
    "The dashboard shows it clearly.", "Nobody has looked at it since March.", "Agreed with the security team.",
    "Tracked in the quarterly goals.", "", "",
)  # fmt: skip
QUESTIONS = (
    "why does {s} keep failing", "who owns {s}", "what is the latency target for {s}", "how do we roll back {s}",
    "when was {s} last migrated", "what did we decide about {s}", "is there a runbook for {s}",
    "which team reviews changes to {s}", "how is {s} monitored", "what breaks {s} under load",
)  # fmt: skip
DISTINCT_PASSAGES = 400
VECTOR_QUESTIONS = 48


def passages(rng: random.Random) -> list[str]:
    """Distinct subject-fact sentences, the texts whose real embeddings the items' vectors jitter."""
    pairs = [(s, f) for s in SUBJECTS for f in FACTS]
    return [f"{s[0].upper()}{s[1:]} {f}." for s, f in rng.sample(pairs, min(DISTINCT_PASSAGES, len(pairs)))]


def item_text(passage: str, i: int) -> str:
    """Item `i`'s content: its passage and a varying detail, so no two items read the same."""
    return f"{passage} {DETAILS[i % len(DETAILS)].format(n=1000 + i)}".strip()


def unit_rows(base: np.ndarray, count: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """`count` jittered unit vectors cycling over the rows of `base`."""
    rows = base[np.arange(count) % len(base)] + rng.normal(0, sigma, (count, base.shape[1])).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def request_bodies(*, layer_id: int, mode: str, tickets: list[int], budget: int) -> list[dict[str, Any]]:
    """One POST /api/v1/context/ body per ticket number.

    `text` bodies send a question; `vector` bodies send only a `query_vector` (near the embedding
    of a question); `hybrid` bodies send both, so the keyword half of retrieval runs as well.
    """
    rng = random.Random(tickets[0] if tickets else 0)
    questions = [q.format(s=s) for q in QUESTIONS for s in SUBJECTS]
    asked = rng.sample(questions, VECTOR_QUESTIONS)
    texts = [asked[n % len(asked)] if mode != "text" else rng.choice(questions) for n in range(len(tickets))]
    bodies: list[dict[str, Any]] = [
        {"layer": layer_id, "query": f"{text} (ticket {t})", "token_budget": budget, "format": "markdown"}
        for text, t in zip(texts, tickets, strict=True)
    ]
    if mode != "text":  # body n's vector jitters the embedding of asked[n % len(asked)], its text
        base = np.stack([embeddings.embed_query(q)[0] for q in asked])
        vectors = unit_rows(base, len(tickets), 0.01, np.random.default_rng(rng.randrange(2**32)))
        for body, vector in zip(bodies, vectors, strict=True):
            body["query_vector"] = [round(float(x), 6) for x in vector]
            if mode == "vector":
                del body["query"]
    return bodies
