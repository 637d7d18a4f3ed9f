"""The SUMMARY and TITLE rungs of long messages, written by the configured LLM in the background.

With `SUMMARY_PROVIDER=llm`, the recomputation of a conversation's communities (after message writes,
never on the request path) also sends the messages of MIN_WORDS words or more that have no LLM summary
of their current text, several per call (apps/summaries/batch.py, within the daily budget), and keeps
each answer in `MessageSummary` with the item's content hash: the same text is never sent twice.
Assembly gives such a message these rungs (`selectors.message_rungs`). A message the LLM could not write keeps
the engine's derived rungs (its leading sentences, its first words) and a row whose `note` says why;
the sweep tries it again. Without an LLM nothing is written or read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from apps.conversations.models import MessageSummary
from apps.summaries.batch import Passage, passages_summarize

MIN_WORDS = 30  # a shorter message's own leading sentence and first words say as much
SUMMARY_TOKENS = 60  # about the engine's derived summary (280 characters)
TITLE_TOKENS = 20  # the seed's max_title_tokens


@dataclass(frozen=True)
class Message:
    id: int
    text: str
    content_hash: str


@dataclass(frozen=True)
class Written:
    """What a message's summary and title rows will hold."""

    item_id: int
    content_hash: str
    summary: str
    title: str
    provider: str
    note: str


def messages_written(*, workspace_id: int, messages: Sequence[Message], llm_now: bool = True) -> list[Written]:
    """Summaries and titles of the long messages whose current text has none yet (LLM configured only)."""
    if settings.SUMMARY_PROVIDER != "llm":
        return []
    long = [m for m in messages if len(m.text.split()) >= MIN_WORDS]
    done = set(
        MessageSummary.objects.filter(item_id__in=[m.id for m in long], note="").values_list("item_id", "content_hash")
    )
    due = [m for m in long if (m.id, m.content_hash) not in done]
    answers = passages_summarize(
        workspace_id=workspace_id,
        passages=[Passage(texts=(m.text,)) for m in due],
        summary_tokens=SUMMARY_TOKENS,
        title_tokens=TITLE_TOKENS,
        llm_now=llm_now,
    )
    return [
        Written(
            item_id=m.id,
            content_hash=m.content_hash,
            summary=a.summary if not a.note else "",
            title=a.title if not a.note else "",
            provider=a.provider,
            note=a.note[:300],
        )
        for m, a in zip(due, answers, strict=True)
    ]


def messages_written_store(*, written: Iterable[Written], alive: set[int], now: datetime) -> None:
    """Upsert the rows of the messages still there (inside the caller's transaction)."""
    rows = [
        MessageSummary(
            item_id=w.item_id,
            content_hash=w.content_hash,
            summary=w.summary,
            title=w.title[:500],
            provider=w.provider,
            note=w.note,
            written_at=now,
        )
        for w in written
        if w.item_id in alive
    ]
    MessageSummary.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["item"],
        update_fields=["content_hash", "summary", "title", "provider", "note", "written_at"],
    )
