"""The LLM as the supersession detector's judge (the hook in apps/layers/supersession_judge.py).

With the LLM provider configured (`SUMMARY_PROVIDER=llm`), the detector asks it, for each newly embedded
item, whether the item supersedes any of its nearest older items; the reply is a JSON object naming them
with a short reason. One attempt (the detector runs in the embedder's background batch, and the rules are
its fallback), held against the workspace's daily LLM budget like a summary's call (budget.py). A failed
call, an unreadable reply or a spent budget raises `JudgeFailed`: the rules decide, saying so.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.utils import timezone

from apps.layers.models import Detector
from apps.layers.supersession_judge import JudgeFailed, Judgement, Question, Statement, Verdict, judge_register
from apps.metrics.registry import SUPERSESSION_JUDGE_FALLBACKS
from apps.summaries import budget, llm

MAX_TOKENS = 300  # the reply: a few ids with a short reason each
STATEMENT_CHARS = 1000
REASON_CHARS = 200

_PROMPT = """You keep an organisation's knowledge base current. A newer statement was added; below it are \
older statements of the same layer, kind and type, each with its id.
For each older statement, decide whether the newer one supersedes it: both are about the same subject and \
the newer one makes the older one no longer true or current (a change, a correction, a replacement). \
Statements that add to each other, or that are about different things, are not superseded.
Reply with only a JSON object: {"supersedes": [{"id": <older id>, "reason": "<why, at most 20 words>"}]}, \
with an empty list when the newer statement supersedes none of them."""


def _line(statement: Statement) -> str:
    text = f"{statement.title}: {statement.content}" if statement.title else statement.content
    return f"{text[:STATEMENT_CHARS]} (written {statement.created_at:%Y-%m-%d %H:%M})"


def messages_of(question: Question) -> list[dict[str, str]]:
    older = "\n".join(f"- id {c.statement.id}: {_line(c.statement)}" for c in question.candidates)
    return [
        {"role": "system", "content": _PROMPT},
        {"role": "user", "content": f"Newer statement: {_line(question.new)}\n\nOlder statements:\n{older}"},
    ]


def parse(text: str, *, ids: set[int]) -> tuple[Verdict, ...]:
    """The reply's verdicts about the asked ids (others ignored); a ValueError when it is not the JSON asked for."""
    first, last = text.find("{"), text.rfind("}")
    if not 0 <= first < last:
        raise ValueError("the reply holds no JSON object")
    data = json.loads(text[first : last + 1])
    named = data.get("supersedes") if isinstance(data, dict) else None
    if not isinstance(named, list):
        raise ValueError('the reply lacks the "supersedes" list')
    verdicts: dict[int, Verdict] = {}
    for entry in named:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), int) or isinstance(entry["id"], bool):
            raise ValueError('each of "supersedes" must be {"id": <integer>, "reason": <text>}')
        if entry["id"] in ids:
            reason = str(entry.get("reason") or "").strip()[:REASON_CHARS] or "the newer statement replaces it"
            verdicts.setdefault(entry["id"], Verdict(old_id=entry["id"], reason=reason))
    return tuple(verdicts.values())


def llm_judge(question: Question) -> Judgement | None:
    """The LLM's judgement, or None with no LLM configured (the rules decide)."""
    if settings.SUMMARY_PROVIDER != "llm":
        return None
    messages = messages_of(question)
    ids = {c.statement.id for c in question.candidates}
    day = timezone.now().date()

    def hold() -> budget.Reservation | None:
        return budget.reserve(
            workspace_id=question.workspace_id,
            day=day,
            prompt_tokens=budget.worst_prompt_tokens(messages),
            completion_tokens=MAX_TOKENS,
        )

    try:
        reply = llm.chat(
            messages, max_tokens=MAX_TOKENS, parse=lambda text: parse(text, ids=ids), retries=False, reserve=hold
        )
    except llm.BudgetSpent as exc:
        SUPERSESSION_JUDGE_FALLBACKS.labels(reason="budget").inc()
        raise JudgeFailed("the daily LLM budget is spent") from exc
    except llm.LlmUnavailable as exc:
        SUPERSESSION_JUDGE_FALLBACKS.labels(reason="failed").inc()
        raise JudgeFailed(f"the LLM failed ({exc.last_error[:120]})") from exc
    verdicts: tuple[Verdict, ...] = reply.value
    return Judgement(
        detector=Detector.LLM,
        verdicts=tuple(
            Verdict(old_id=v.old_id, reason=f"LLM {settings.SUMMARY_LLM_MODEL}: {v.reason}") for v in verdicts
        ),
    )


def register() -> None:
    judge_register(llm_judge)
