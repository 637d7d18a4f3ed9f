"""Daily LLM summarization budget per workspace, in tokens and USD.

Each attempt of a call reserves its worst case before it starts (`reserve`: the prompt's UTF-8 bytes,
which no byte-level tokenizer exceeds, plus the message framing, and the most output asked for),
in one conditional UPDATE that also sees every other reservation in flight; after the attempt the
reservation is settled to the usage the endpoint reported (`Reservation.settle`). So spend never
passes the budget, whatever the model's tokenizer or how many runs call at once. An estimate made
before the call, as before, let one call overshoot by 20%. Past either budget the service uses the
extractive provider until the next UTC day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.db.models import F

from apps.summaries.models import SummaryUsage

MESSAGE_FRAMING_TOKENS = 8  # role and separators per chat message, and once for the reply's start


def usd_of(*, prompt_tokens: int, completion_tokens: int) -> float:
    return (
        prompt_tokens * settings.SUMMARY_LLM_USD_PER_1K_INPUT
        + completion_tokens * settings.SUMMARY_LLM_USD_PER_1K_OUTPUT
    ) / 1000


def worst_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """The most tokens any byte-level tokenizer can make of these messages (a token covers at least one byte)."""
    return sum(len(m["content"].encode()) + MESSAGE_FRAMING_TOKENS for m in messages) + MESSAGE_FRAMING_TOKENS


def _room(usage: SummaryUsage | None, tokens: int, usd: float) -> bool:
    used_tokens = usage.prompt_tokens + usage.completion_tokens + usage.reserved_tokens if usage else 0
    used_usd = usage.usd + usage.reserved_usd if usage else 0.0
    return (
        used_tokens + tokens <= settings.SUMMARY_DAILY_TOKEN_BUDGET
        and used_usd + usd <= settings.SUMMARY_DAILY_USD_BUDGET
    )


def budget_allows(*, workspace_id: int, day: date, prompt_tokens: int, completion_tokens: int) -> bool:
    """Whether a call of this worst case fits today's budgets now (reservations in flight counted)."""
    usage = SummaryUsage.objects.filter(workspace_id=workspace_id, day=day).first()
    usd = usd_of(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return _room(usage, prompt_tokens + completion_tokens, usd)


@dataclass(frozen=True)
class Reservation:
    """Tokens and USD held for one attempt until it is settled."""

    workspace_id: int
    day: date
    tokens: int
    usd: float

    def settle(self, *, prompt_tokens: int, completion_tokens: int, called: bool = True) -> None:
        """Release the hold and add what the attempt really used (one atomic UPDATE)."""
        SummaryUsage.objects.filter(workspace_id=self.workspace_id, day=self.day).update(
            reserved_tokens=F("reserved_tokens") - self.tokens,
            reserved_usd=F("reserved_usd") - self.usd,
            calls=F("calls") + (1 if called else 0),
            prompt_tokens=F("prompt_tokens") + prompt_tokens,
            completion_tokens=F("completion_tokens") + completion_tokens,
            usd=F("usd") + usd_of(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        )


def reserve(*, workspace_id: int, day: date, prompt_tokens: int, completion_tokens: int) -> Reservation | None:
    """Hold this worst case against today's budgets, or None when it does not fit (nothing held)."""
    tokens = prompt_tokens + completion_tokens
    usd = usd_of(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    SummaryUsage.objects.get_or_create(workspace_id=workspace_id, day=day)
    held = (
        SummaryUsage.objects.filter(workspace_id=workspace_id, day=day)
        .alias(
            after_tokens=F("prompt_tokens") + F("completion_tokens") + F("reserved_tokens") + tokens,
            after_usd=F("usd") + F("reserved_usd") + usd,
        )
        .filter(after_tokens__lte=settings.SUMMARY_DAILY_TOKEN_BUDGET, after_usd__lte=settings.SUMMARY_DAILY_USD_BUDGET)
        .update(reserved_tokens=F("reserved_tokens") + tokens, reserved_usd=F("reserved_usd") + usd)
    )
    return Reservation(workspace_id=workspace_id, day=day, tokens=tokens, usd=usd) if held else None


def usage_record(*, workspace_id: int, day: date, prompt_tokens: int, completion_tokens: int) -> None:
    """Add one call's usage to the workspace's day (atomic increments, safe across workers)."""
    SummaryUsage.objects.get_or_create(workspace_id=workspace_id, day=day)
    Reservation(workspace_id=workspace_id, day=day, tokens=0, usd=0.0).settle(
        prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
    )
