"""Short summaries and titles of many passages, several per LLM call (communities, long messages).

With the LLM provider configured (`SUMMARY_PROVIDER=llm`), passages are sent SUMMARY_LLM_BATCH at a
time in one call whose reply is a JSON object keyed by each passage's number; each call holds its worst
case against the workspace's daily budget first (budget.py) and settles to the reply's usage. One
attempt per call: callers run in the background and keep the extractive text until the next run. A
passage gets the extractive summary and title instead, with `note` saying why, when no LLM is
configured (no note: the default), the LLM failed recently or now (`llm_unavailable`, recorded in
`ProviderHealth` as a layer summary's failure is, so the status and dashboard show it), the budget has
no room (`daily_budget_spent`, the note a layer summary gets), or the reply left the passage out.
Callers cache by `Passage.digest`: a passage whose text they summarized before is not sent again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from apps.core.tokenizer import count_tokens, encoding_for_model
from apps.summaries import budget, health, llm
from apps.summaries.extractive import extractive_summary, extractive_title
from apps.summaries.truncation import truncate_at_sentence

log = logging.getLogger(__name__)

EXTRACTIVE = "extractive"
BUDGET_SPENT = "daily_budget_spent: extractive provider used"
DEFERRED = "llm_deferred: the LLM writes it in the background; extractive provider meanwhile"
PASSAGE_INPUT_TOKENS = 600  # a longer passage is sent as its most central sentences
TITLE_REPLY_TOKENS = 24  # per passage in the reply, beside its summary

_PROMPT = """You summarize passages of a conversation for an AI agent's context. For each numbered \
passage below write:
- "title": a few words naming what the passage is about (its subject, decision or fact; never a \
greeting or small talk), at most {title} tokens;
- "summary": the facts, decisions and open questions it holds, at most {summary} tokens.
Reply with only a JSON object keyed by the passage numbers: {{"1": {{"title": "...", "summary": "..."}}, ...}}."""


@dataclass(frozen=True)
class Passage:
    """Texts to summarize together (a community's messages, or one message)."""

    texts: tuple[str, ...]

    @property
    def digest(self) -> str:
        """The content hash callers cache a written summary under (same texts: same digest)."""
        return hashlib.sha256("\x1e".join(self.texts).encode()).hexdigest()


@dataclass(frozen=True)
class Written:
    summary: str
    title: str
    provider: str  # "extractive" or "llm:<model>"
    note: str = ""  # why the extractive provider wrote it though an LLM is configured


def _encoding() -> str:
    return encoding_for_model(settings.DEFAULT_MODEL).encoding


def extractive_written(passage: Passage, *, summary_tokens: int, title_tokens: int, note: str = "") -> Written:
    """The offline summary and title (apps/summaries/extractive.py), with `note` saying why, if any."""
    texts = list(passage.texts)
    return Written(
        summary=extractive_summary(texts, summary_tokens),
        title=extractive_title(texts, title_tokens),
        provider=EXTRACTIVE,
        note=note,
    )


def _input(passage: Passage) -> str:
    text = "\n".join(t.strip() for t in passage.texts if t.strip())
    if count_tokens(text, _encoding()) > PASSAGE_INPUT_TOKENS:
        text = extractive_summary(list(passage.texts), PASSAGE_INPUT_TOKENS)
    return text


def _messages(passages: Sequence[Passage], *, summary_tokens: int, title_tokens: int) -> list[dict[str, str]]:
    system = _PROMPT.format(title=title_tokens, summary=summary_tokens)
    body = "\n\n".join(f"Passage {n}:\n{_input(p)}" for n, p in enumerate(passages, start=1))
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


def _parse(text: str, count: int) -> dict[int, tuple[str, str]]:
    """(title, summary) by passage number; a ValueError when the reply is not the JSON asked for."""
    first, last = text.find("{"), text.rfind("}")
    if not 0 <= first < last:
        raise ValueError("the reply holds no JSON object")
    data = json.loads(text[first : last + 1])
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    out: dict[int, tuple[str, str]] = {}
    for n in range(1, count + 1):
        entry = data.get(str(n))
        if isinstance(entry, dict) and isinstance(entry.get("title"), str) and isinstance(entry.get("summary"), str):
            title, summary = entry["title"].strip(), entry["summary"].strip()
            if title and summary:
                out[n] = (title, summary)
    if not out:
        raise ValueError("the reply answers none of the passages")
    return out


def _fitted(text: str, limit: int) -> str:
    return text if count_tokens(text, _encoding()) <= limit else truncate_at_sentence([text], limit)


def passages_summarize(
    *, workspace_id: int, passages: Sequence[Passage], summary_tokens: int, title_tokens: int, llm_now: bool = True
) -> list[Written]:
    """A summary and a title of each passage, in order: by the LLM when configured and able, else extractive.

    `llm_now=False` (a caller answering a request): no call, the extractive text with the DEFERRED note."""
    sizes = {"summary_tokens": summary_tokens, "title_tokens": title_tokens}

    def extractive(passage: Passage, note: str = "") -> Written:
        return extractive_written(passage, summary_tokens=summary_tokens, title_tokens=title_tokens, note=note)

    if settings.SUMMARY_PROVIDER != "llm" or not passages:
        return [extractive(p) for p in passages]
    if not llm_now:
        return [extractive(p, DEFERRED) for p in passages]
    if health.failing(workspace_id=workspace_id, now=timezone.now()):
        return [extractive(p, "llm_unavailable: the LLM failed recently; extractive provider used") for p in passages]
    out: list[Written] = []
    size = settings.SUMMARY_LLM_BATCH
    note = ""  # once the budget is spent or the LLM fails, the rest of this run is extractive
    for start in range(0, len(passages), size):
        batch = passages[start : start + size]
        written = None if note else _call(workspace_id, batch, **sizes)
        if isinstance(written, str):
            note, written = written, None
        for n, passage in enumerate(batch, start=1):
            if written is not None and n in written:
                title, summary = written[n]
                out.append(
                    Written(
                        summary=_fitted(summary, summary_tokens),
                        title=_fitted(title, title_tokens),
                        provider=f"llm:{settings.SUMMARY_LLM_MODEL}"[:64],
                    )
                )
                continue
            why = note or "llm_incomplete: the LLM's reply left this passage out; extractive provider used"
            out.append(extractive(passage, why))
    return out


def _call(
    workspace_id: int, batch: Sequence[Passage], *, summary_tokens: int, title_tokens: int
) -> dict[int, tuple[str, str]] | str:
    """The LLM's (title, summary) by passage number, or the note saying why there are none."""
    messages = _messages(batch, summary_tokens=summary_tokens, title_tokens=title_tokens)
    max_tokens = len(batch) * (summary_tokens + title_tokens + TITLE_REPLY_TOKENS) + 50
    day = timezone.now().date()

    def hold() -> budget.Reservation | None:
        return budget.reserve(
            workspace_id=workspace_id,
            day=day,
            prompt_tokens=budget.worst_prompt_tokens(messages),
            completion_tokens=max_tokens,
        )

    try:
        reply = llm.chat(
            messages, max_tokens=max_tokens, parse=lambda text: _parse(text, len(batch)), retries=False, reserve=hold
        )
    except llm.BudgetSpent:
        log.info("workspace %s: daily LLM budget spent, passages summarized extractively", workspace_id)
        return BUDGET_SPENT
    except llm.LlmUnavailable as exc:
        health.failure_record(workspace_id=workspace_id, error=exc.last_error, now=timezone.now())
        return f"llm_unavailable: {exc.last_error[:200]}; extractive provider used"
    health.success_record(workspace_id=workspace_id)
    written: dict[int, tuple[str, str]] = reply.value
    return written
