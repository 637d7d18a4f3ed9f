"""When and how long to wait before trying a request again."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from typing import Any

RETRY_STATUSES = frozenset({429, 502, 503, 504})
IDEMPOTENCY_HEADER = "Idempotency-Key"
IN_PROGRESS = "idempotency_key_in_progress"  # 409 while the first request with the key still runs


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped; `Retry-After` wins when the server sends it.

    Reads, context assembly and consumption reports are idempotent and simply sent again. A write
    (POST) carries an `Idempotency-Key`, the same on every attempt, so the service answers a repeat
    with the first answer instead of writing twice; other writes are sent again only when the
    connection was refused (nothing reached the service).
    """

    max_retries: int = 3
    backoff: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (1 for the first retry)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        return random.uniform(0, min(self.max_delay, self.backoff * 2 ** (attempt - 1)))


def retry_after_seconds(value: str | None) -> float | None:
    """The `Retry-After` header in seconds (only the delta-seconds form is used)."""
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def attempt_headers(*, method: str, idempotent: bool) -> tuple[dict[str, str], bool]:
    """Headers every attempt of one call carries, and whether the call may be sent again after a failure."""
    if idempotent:
        return {}, True
    if method == "POST":
        return {IDEMPOTENCY_HEADER: uuid.uuid4().hex}, True
    return {}, False


def retryable(status: int, body: Any) -> bool:
    """A status worth another attempt: 429/502/503/504, or a 409 while the same key's first request runs."""
    if status in RETRY_STATUSES:
        return True
    error = body.get("error") if status == 409 and isinstance(body, dict) else None
    return isinstance(error, dict) and error.get("code") == IN_PROGRESS
