"""Daily LLM summarization budget per workspace, in tokens and USD (seed 002 cost controls).

Checked before each call with an estimate; recorded after it with the endpoint's usage. Past
either budget the service uses the extractive provider until the next UTC day.
"""

from __future__ import annotations

from datetime import date

from django.conf import settings
from django.db.models import F

from apps.summaries.models import SummaryUsage


def usd_of(*, prompt_tokens: int, completion_tokens: int) -> float:
    return (
        prompt_tokens * settings.SUMMARY_LLM_USD_PER_1K_INPUT
        + completion_tokens * settings.SUMMARY_LLM_USD_PER_1K_OUTPUT
    ) / 1000


def budget_allows(*, workspace_id: int, day: date, prompt_tokens: int, completion_tokens: int) -> bool:
    """Whether a call of this estimated size keeps the workspace within today's budgets."""
    usage = SummaryUsage.objects.filter(workspace_id=workspace_id, day=day).first()
    used_tokens = usage.prompt_tokens + usage.completion_tokens if usage else 0
    used_usd = usage.usd if usage else 0.0
    extra_usd = usd_of(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return (
        used_tokens + prompt_tokens + completion_tokens <= settings.SUMMARY_DAILY_TOKEN_BUDGET
        and used_usd + extra_usd <= settings.SUMMARY_DAILY_USD_BUDGET
    )


def usage_record(*, workspace_id: int, day: date, prompt_tokens: int, completion_tokens: int) -> None:
    """Add one call's usage to the workspace's day (atomic increments, safe across workers)."""
    SummaryUsage.objects.get_or_create(workspace_id=workspace_id, day=day)
    SummaryUsage.objects.filter(workspace_id=workspace_id, day=day).update(
        calls=F("calls") + 1,
        prompt_tokens=F("prompt_tokens") + prompt_tokens,
        completion_tokens=F("completion_tokens") + completion_tokens,
        usd=F("usd") + usd_of(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
    )
