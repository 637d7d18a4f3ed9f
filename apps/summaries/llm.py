"""The one module that talks to the LLM SDK: an OpenAI-compatible chat endpoint, with retries.

A failed call (transport error, HTTP error, unusable reply) is retried after 1 s, 2 s and 4 s
(SUMMARY_LLM_BACKOFF_SECONDS): one first attempt and at most three retries, each logged and
counted in `context_architect_llm_retries`. After the last one, LlmUnavailable. `sleep` is
injectable so tests can check the schedule without waiting for it. With `retries=False` there is
one attempt (a request that must answer at once leaves the retries to the background).

With `reserve`, each attempt first holds its worst case against the budget (None: it does not fit,
BudgetSpent) and settles it to the reply's usage afterwards, whether the attempt succeeded or not.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings

from apps.metrics.registry import LLM_RETRIES
from apps.summaries.budget import Reservation

log = logging.getLogger(__name__)
T = TypeVar("T")


class LlmUnavailable(Exception):
    """Every attempt failed; `attempts` calls were made, the last failing with `last_error`."""

    def __init__(self, attempts: int, last_error: str) -> None:
        super().__init__(f"LLM unavailable after {attempts} attempts: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class BudgetSpent(Exception):
    """The budget had no room for an attempt's worst case; `attempts` calls were made before."""

    def __init__(self, attempts: int) -> None:
        super().__init__(f"the daily LLM budget has no room for another call (after {attempts} attempts)")
        self.attempts = attempts


@dataclass(frozen=True)
class LlmReply:
    value: Any  # what `parse` made of the reply text
    prompt_tokens: int
    completion_tokens: int
    attempts: int


@functools.lru_cache(maxsize=4)
def _client(base_url: str, api_key: str, timeout: float) -> Any:
    from openai import OpenAI

    # Retries are ours (logged, counted, on the seed's schedule), so the SDK's own are off.
    return OpenAI(base_url=base_url or None, api_key=api_key or "unused", timeout=timeout, max_retries=0)


def chat(
    messages: list[dict[str, str]],
    *,
    max_tokens: int,
    parse: Callable[[str], T],
    sleep: Callable[[float], None] = time.sleep,
    retries: bool = True,
    reserve: Callable[[], Reservation | None] | None = None,
) -> LlmReply:
    """One chat completion, parsed by `parse` (a ValueError there counts as a failed attempt)."""
    from openai import OpenAIError

    client = _client(settings.SUMMARY_LLM_BASE_URL, settings.SUMMARY_LLM_API_KEY, settings.SUMMARY_LLM_TIMEOUT_SECONDS)
    waits = tuple(settings.SUMMARY_LLM_BACKOFF_SECONDS) if retries else ()
    attempts = len(waits) + 1
    for attempt in range(1, attempts + 1):
        held = reserve() if reserve is not None else None
        if reserve is not None and held is None:
            raise BudgetSpent(attempt - 1)
        used = (0, 0)
        try:
            try:
                response = client.chat.completions.create(
                    model=settings.SUMMARY_LLM_MODEL, messages=messages, max_tokens=max_tokens, temperature=0
                )
                usage = response.usage
                used = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
                value = parse(response.choices[0].message.content or "")
            finally:  # settled before any backoff wait: a failed attempt holds nothing while it sleeps
                if held is not None:
                    held.settle(prompt_tokens=used[0], completion_tokens=used[1])
            return LlmReply(value=value, prompt_tokens=used[0], completion_tokens=used[1], attempts=attempt)
        except (OpenAIError, ValueError, IndexError, AttributeError) as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            if attempt == attempts:
                log.warning("LLM summarization attempt %d of %d failed (%s); giving up", attempt, attempts, error)
                raise LlmUnavailable(attempts, error) from exc
            wait = waits[attempt - 1]
            log.warning(
                "LLM summarization attempt %d of %d failed (%s); retrying in %.3g s", attempt, attempts, error, wait
            )
            LLM_RETRIES.inc()
            sleep(wait)
    raise AssertionError("unreachable")
