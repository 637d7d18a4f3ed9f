"""When and how long to wait before trying a request again."""

from __future__ import annotations

import random
from dataclasses import dataclass

RETRY_STATUSES = frozenset({429, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped; `Retry-After` wins when the server sends it.

    Only idempotent calls are retried (reads, context assembly, consumption reports, which the API
    treats as idempotent): a write that may have landed is never sent twice.
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
