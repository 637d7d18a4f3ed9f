"""Summary providers: extractive (offline, default) and LLM (OpenAI-compatible, one call per set).

Both return all three depths at once, each within its exact token limit. The LLM writes the
three depths in one JSON reply (a batched call); a depth it writes too long is cut at a
sentence boundary. Personalized summaries lean on the reader's concerns: the extractive
provider biases sentence choice toward them and, at the larger depths, leads with them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from django.conf import settings

from apps.core.tokenizer import count_tokens, encoding_for_model
from apps.summaries import llm
from apps.summaries.budget import Reservation, worst_prompt_tokens
from apps.summaries.extractive import Ranked, extractive_summary, rank, select
from apps.summaries.models import DEPTH_TOKEN_LIMITS, Depth, Personalization
from apps.summaries.personalization import Reader
from apps.summaries.sources import Source
from apps.summaries.truncation import truncate_at_sentence

DEPTHS: tuple[str, ...] = (Depth.SENTENCE, Depth.PARAGRAPH, Depth.DETAILED)
# Share of a personalized paragraph/detailed summary given to the reader's concerns.
LEAD_SHARE: dict[str, float] = {Personalization.PERSONALIZED: 0.2, Personalization.HIGHLY_PERSONALIZED: 0.35}


@dataclass(frozen=True)
class Generated:
    """Texts by depth, who wrote them, and what the call cost."""

    texts: dict[str, str]
    provider: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    note: str = ""  # why another provider than the one asked for wrote it


class Provider(Protocol):
    name: str

    def summarize(self, source: Source, *, reader: Reader | None, personalization: str) -> Generated: ...


def _encoding() -> str:
    return encoding_for_model(settings.DEFAULT_MODEL).encoding


class ExtractiveProvider:
    """Central, non-redundant sentences (apps/summaries/extractive.py); no network, no model.

    The source is ranked once and each depth selected from that ranking.
    """

    name = "extractive"

    def summarize(self, source: Source, *, reader: Reader | None, personalization: str) -> Generated:
        focus = reader.focus if reader else []
        ranked = rank(source.texts, focus=focus)
        if ranked is None:
            return Generated(texts=dict.fromkeys(DEPTHS, ""), provider=self.name)
        texts = {depth: self._depth(ranked, DEPTH_TOKEN_LIMITS[depth], reader, personalization) for depth in DEPTHS}
        return Generated(texts=texts, provider=self.name)

    def _depth(self, ranked: Ranked, limit: int, reader: Reader | None, personalization: str) -> str:
        body_only = select(ranked, limit)
        if reader is None or not reader.focus or limit < 100:  # a sentence-depth summary has no room for a lead
            return body_only
        encoding = ranked.encoding
        head = f"For {reader.username}:"
        lead_room = int(limit * LEAD_SHARE.get(personalization, 0.2)) - count_tokens(head, encoding) - 1
        lead = extractive_summary(reader.focus, lead_room)
        if not lead:
            return body_only
        lead_text = f"{head} {lead}"
        room = limit - count_tokens(lead_text, encoding) - 1
        while room > 0:
            text = f"{lead_text} {select(ranked, room)}".strip()
            if count_tokens(text, encoding) <= limit:
                return text
            room -= 1
        return body_only


_PROMPT = """You summarize one layer of an organisation's knowledge for an AI agent's context.
Write three summaries of the content below, from the most central facts, decisions and open issues:
- "sentence": one sentence, at most {sentence} tokens;
- "paragraph": at most {paragraph} tokens;
- "detailed": at most {detailed} tokens.
Reply with only a JSON object with the keys "sentence", "paragraph" and "detailed"."""

_READER = """These summaries are for {user}. Their recent concerns: {concerns}
Their preferences: {preferences}
Put first what matters to them, without inventing anything."""


def _prompt(source: Source, reader: Reader | None) -> list[dict[str, str]]:
    system = _PROMPT.format(**{d: DEPTH_TOKEN_LIMITS[d] for d in DEPTHS})
    if reader is not None:
        system += "\n" + _READER.format(
            user=reader.username, concerns=reader.concerns or "-", preferences=reader.preferences or "-"
        )
    parts = [f"Layer: {source.name} ({source.kind})"]
    if source.child_summaries:
        parts.append("Summaries of its child layers:\n" + "\n".join(f"- {s}" for s in source.child_summaries))
    if source.items:
        titled = [f"{t}: {c}" if t else c for t, c in zip(source.item_titles, source.items, strict=True)]
        parts.append("Its items:\n" + "\n".join(f"- {s}" for s in titled))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def _json_object(text: str) -> str | None:
    """From the first `{` to the last `}` (what a DOTALL search for `{.*}` finds), without
    scanning to the end from every `{` of a reply that has no `}` (quadratic in the reply)."""
    first, last = text.find("{"), text.rfind("}")
    return text[first : last + 1] if 0 <= first < last else None


def _parse(text: str) -> dict[str, str]:
    found = _json_object(text)
    if found is None:
        raise ValueError("the reply holds no JSON object")
    data = json.loads(found)
    if not isinstance(data, dict) or not all(isinstance(data.get(d), str) and data[d].strip() for d in DEPTHS):
        raise ValueError("the reply lacks one of sentence/paragraph/detailed")
    return {d: data[d].strip() for d in DEPTHS}


def llm_worst_case(source: Source, reader: Reader | None) -> tuple[int, int]:
    """(most prompt tokens, most completion tokens) of the call, what the budget holds for it."""
    return worst_prompt_tokens(_prompt(source, reader)), llm_max_tokens()


def llm_max_tokens() -> int:
    return sum(DEPTH_TOKEN_LIMITS.values()) + 100


class LlmProvider:
    """Any OpenAI-compatible chat endpoint (SUMMARY_LLM_BASE_URL, _MODEL, _API_KEY).

    `reserve` holds an attempt's worst case against the workspace's budget (llm.chat settles it);
    `retries=False` makes one attempt only."""

    def __init__(
        self,
        sleep: Callable[[float], None] = time.sleep,
        *,
        reserve: Callable[[int, int], Reservation | None] | None = None,
        retries: bool = True,
    ) -> None:
        self.name = f"llm:{settings.SUMMARY_LLM_MODEL}"[:64]
        self._sleep = sleep
        self._reserve = reserve
        self._retries = retries

    def summarize(self, source: Source, *, reader: Reader | None, personalization: str) -> Generated:
        messages = _prompt(source, reader)
        hold = self._reserve
        reply = llm.chat(
            messages,
            max_tokens=llm_max_tokens(),
            parse=_parse,
            sleep=self._sleep,
            retries=self._retries,
            reserve=None if hold is None else lambda: hold(worst_prompt_tokens(messages), llm_max_tokens()),
        )
        encoding = _encoding()
        texts = {}
        for depth in DEPTHS:
            text, limit = reply.value[depth], DEPTH_TOKEN_LIMITS[depth]
            if count_tokens(text, encoding) > limit:
                text = truncate_at_sentence([text], limit)
            texts[depth] = text
        return Generated(
            texts=texts,
            provider=self.name,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
