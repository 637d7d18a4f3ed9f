"""What the demo workspace holds: a payments team's knowledge at every layer, and one agent conversation.

Built fresh on each call (ItemInput is mutable), with dates relative to now.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from apps.layers.services import ItemInput


def layer_items(*, now: datetime) -> dict[str, list[ItemInput]]:
    """Items per layer kind: memories, packages, specs (one pinned) and documents."""
    days = lambda n: now - timedelta(days=n)  # noqa: E731 - a local shorthand for readable dates
    return {
        "company": [
            ItemInput(
                kind="document",
                type="handbook",
                title="Incident response handbook",
                created_at=days(120),
                content="Every production incident gets an incident commander within 5 minutes. Severity 1 "
                "means customers cannot pay; page the on-call engineer and post in #incidents. A blameless "
                "post-mortem is due within five working days.",
            ),
            ItemInput(
                kind="memory",
                type="fact",
                confidence=1.0,
                importance=0.7,
                created_at=days(90),
                content="Production runs in eu-west-1 and us-east-1; data of EU customers never leaves eu-west-1.",
            ),
        ],
        "org": [
            ItemInput(
                kind="spec",
                type="knowledge",
                title="Code review policy",
                created_at=days(60),
                content="Every change to a payment path needs two approvals, one of them from Payments Platform. "
                "Card numbers, CVCs and full tokens must never appear in logs, traces or error messages.",
            ),
            ItemInput(
                kind="memory",
                type="decision",
                confidence=0.9,
                created_at=days(45),
                content="Engineering standardised on PostgreSQL 16 for all new services; Redis is for caches "
                "and queues only, never as a primary store.",
            ),
        ],
        "team": [
            ItemInput(
                kind="memory",
                type="entity",
                title="Priya Raman",
                confidence=0.95,
                importance=0.6,
                created_at=days(30),
                content="Priya Raman is tech lead of Payments Platform and owns the charge retry logic. She "
                "prefers a short design note before code and reviews most payment changes.",
            ),
            ItemInput(
                kind="memory",
                type="entity",
                title="Card processors",
                confidence=0.9,
                created_at=days(28),
                content="Stripe is the primary card processor; Adyen is the fallback for EU cards when Stripe "
                "is degraded.",
            ),
            ItemInput(
                kind="memory",
                type="fact",
                confidence=0.85,
                importance=0.8,
                created_at=days(20),
                content="The charge service retries failed card charges up to three times with exponential "
                "backoff (2 s, 8 s, 32 s) before marking the order as payment_failed.",
            ),
        ],
        "project": [
            ItemInput(
                kind="spec",
                type="requirement",
                title="No double charges",
                pinned=True,
                importance=0.95,
                external_id="REQ-1",
                created_at=days(14),
                content="Checkout must never charge a customer twice for one order: every charge request "
                "carries an idempotency key derived from the order id and the attempt number.",
            ),
            ItemInput(
                kind="spec",
                type="design",
                title="Asynchronous charge retries",
                external_id="DES-4",
                created_at=days(12),
                content="Retries move out of the request path into a Celery queue with jittered exponential "
                "backoff. The API answers 202 while a charge is pending and the client polls the order.",
            ),
            ItemInput(
                kind="spec",
                type="task",
                title="Record charge attempts",
                external_id="TASK-142",
                created_at=days(10),
                content="Add a charge_attempts table recording each attempt's processor, response code, "
                "Retry-After header and latency, so retries can be audited per order.",
            ),
            ItemInput(
                kind="spec",
                type="decision",
                title="Retry cap",
                external_id="DEC-7",
                created_at=days(9),
                content="Automatic retries are capped at 3 per order. Soft declines such as insufficient_funds "
                "are never retried automatically; the customer is asked for another card.",
            ),
            ItemInput(
                kind="spec",
                type="knowledge",
                title="Processor error codes",
                created_at=days(8),
                content="card_declined and expired_card are final. processing_error, rate_limited and HTTP 429 "
                "are retryable, but only after the delay given in Retry-After.",
            ),
            ItemInput(
                kind="package",
                type="investigation",
                priority="critical",
                group_id="retry-storm",
                agent_types=["debugger", "reviewer"],
                title="Retry storm of 4 March",
                created_at=days(6),
                content="On 4 March the retry worker re-enqueued every 429 from Stripe immediately, ignoring "
                "Retry-After. Load on Stripe grew fourfold in 10 minutes and 2.1% of checkouts failed.",
            ),
            ItemInput(
                kind="package",
                type="research",
                priority="high",
                group_id="retry-storm",
                agent_types=["researcher", "planner"],
                title="How payment providers expect retries",
                created_at=days(5),
                content="Stripe and Adyen both ask clients to honour Retry-After and to use idempotency keys; "
                "both recommend exponential backoff with full jitter and a cap on attempts.",
            ),
            ItemInput(
                kind="package",
                type="strategy",
                priority="medium",
                group_id="retry-storm",
                agent_types=["planner", "coder"],
                title="Rollout plan",
                created_at=days(4),
                content="Ship the retry queue behind the async_charges flag: 10% of EU traffic for two days, "
                "then 50%, then everyone, watching the charge error rate and p95 checkout latency.",
            ),
            ItemInput(
                kind="package",
                type="research",
                priority="low",
                group_id="observability",
                agent_types=["researcher"],
                title="Checkout dashboards",
                created_at=days(3),
                content="The checkout Grafana board lacks a panel for retries per minute by processor; adding "
                "it would have shown the 4 March storm about eight minutes earlier.",
            ),
            ItemInput(
                kind="document",
                type="runbook",
                title="Runbook: charge retry backlog",
                created_at=days(2),
                content="If the charge_retries queue exceeds 5,000 messages: pause the retry consumer, check "
                "the processor status pages, then resume with a concurrency of 4 and watch the 429 rate.",
            ),
        ],
        "multi_session": [
            ItemInput(
                kind="memory",
                type="decision",
                confidence=0.9,
                importance=0.8,
                created_at=days(1),
                content="Agreed with Priya: the fix honours Retry-After, keeps the cap of three retries and "
                "ships behind the async_charges flag.",
            ),
            ItemInput(
                kind="memory",
                type="fact",
                confidence=0.7,
                created_at=days(1),
                content="The retry storms correlate with Stripe answering HTTP 429 during the EU lunchtime peak "
                "(12:00-13:30 CET).",
            ),
        ],
    }


def conversation() -> list[tuple[int | None, ItemInput]]:
    """Turns of one agent session as (index of the turn answered, message); the last two branch from one."""
    return [
        (
            None,
            ItemInput(
                kind="message",
                role="system",
                content="You are a coding agent on the Northwind checkout service. Follow the team's specs and "
                "never log card data.",
            ),
        ),
        (
            0,
            ItemInput(
                kind="message",
                role="user",
                task_ids=["TASK-142"],
                content="Why did the charge retry worker cause a retry storm on 4 March?",
            ),
        ),
        (
            1,
            ItemInput(
                kind="message",
                role="assistant",
                task_ids=["TASK-142"],
                content="The worker treats HTTP 429 from Stripe as retryable but re-enqueues at once instead of "
                "waiting for Retry-After, so every rate-limited charge came straight back.",
            ),
        ),
        (
            2,
            ItemInput(
                kind="message",
                role="tool",
                task_ids=["TASK-142"],
                content="charge_worker.py:88: if resp.status in RETRYABLE: enqueue(order_id, delay=0)",
            ),
        ),
        (
            3,
            ItemInput(
                kind="message",
                role="user",
                task_ids=["TASK-142"],
                content="Draft a fix that honours Retry-After and keeps the cap of three retries.",
            ),
        ),
        (
            4,
            ItemInput(
                kind="message",
                role="assistant",
                task_ids=["TASK-142"],
                content="Plan: read Retry-After (seconds or HTTP date), use max(Retry-After, backoff with jitter) as "
                "the delay, record each attempt in charge_attempts, and stop after the third attempt.",
            ),
        ),
        (
            4,
            ItemInput(
                kind="message",
                role="assistant",
                task_ids=["TASK-142"],
                content="Alternative: a token bucket per processor in Redis, so retries never exceed the rate the "
                "processor allows, with Retry-After only as a floor.",
            ),
        ),
    ]
