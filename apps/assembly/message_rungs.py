"""Long messages' SUMMARY and TITLE rungs as the configured LLM wrote them (conversations' MessageSummary).

One query for the message candidates of a request, and only with an LLM configured: a message with an
LLM summary of its current text gets the ladder full → that summary → its own title or the LLM's; any
other keeps the rungs the engine derives from its text (engine/ladder.py).
"""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings

from apps.conversations.selectors import message_rungs
from apps.engine.types import Candidate, Rung
from apps.layers.services import content_hash


def _rungs(candidate: Candidate, summary: str, title: str) -> tuple[Rung, ...]:
    """As the engine's ladder: each rung shorter than the one above it, or left out."""
    rungs = [Rung("full", candidate.content)]
    if summary and len(summary) < len(candidate.content):
        rungs.append(Rung("summary", summary))
    name = next((t for t in (candidate.title, title) if t and len(t) < len(rungs[-1].text)), "")
    if name:  # its own title, else the LLM's when its own is no shorter than the rung above
        rungs.append(Rung("title", name))
    return tuple(rungs)


def with_written_rungs(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates, each message with an LLM-written summary given it as its rungs."""
    if settings.SUMMARY_PROVIDER != "llm":  # the default: no query, the engine's rungs
        return candidates
    hashes = {
        c.id: content_hash(title=c.title, content=c.content)
        for c in candidates
        if c.source == "item" and c.kind == "message" and not c.rungs and c.summary is None
    }
    written = message_rungs(item_hashes=hashes) if hashes else {}
    if not written:
        return candidates
    return [
        replace(c, rungs=_rungs(c, *written[c.id])) if c.source == "item" and c.id in written else c for c in candidates
    ]
