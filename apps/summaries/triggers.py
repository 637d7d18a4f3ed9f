"""When a layer's summaries are due: time-based or change-based, whichever comes first.

Pure: takes the configuration and `now`, so tests control time.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from apps.summaries.config import SummaryConfig

CHANGES = "changes"
INTERVAL = "interval"
NEVER = "never_summarized"


def trigger_reason(config: SummaryConfig, *, now: datetime) -> str | None:
    """Why the layer is due now (`changes`, `interval`, `never_summarized`), or None."""
    if config.changes_since_summary >= config.update_on_changes:
        return CHANGES
    if config.last_summarized_at is None:
        return NEVER
    if now - config.last_summarized_at >= timedelta(seconds=config.update_interval_seconds):
        return INTERVAL
    return None
