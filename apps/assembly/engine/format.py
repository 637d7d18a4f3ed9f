"""Output formats: each chunk renders to a piece; pieces are joined inside a frame.

The context string is exactly `head + sep.join(pieces) + tail`, which lets the packer estimate
cost piece by piece and then verify the whole string with one exact count.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from apps.assembly.engine.types import Candidate

FORMATS = ("json", "markdown", "text")


@dataclass(frozen=True)
class Frame:
    head: str
    sep: str
    tail: str
    empty: str


FRAMES: dict[str, Frame] = {
    "json": Frame(head="[", sep=", ", tail="]", empty="[]"),
    "markdown": Frame(head="# Context\n\n", sep="\n\n", tail="", empty=""),
    "text": Frame(head="", sep="\n\n", tail="", empty=""),
}


def _label(candidate: Candidate) -> str:
    return f"{candidate.kind}/{candidate.type}" if candidate.type else candidate.kind


def render_piece(candidate: Candidate, text: str, *, fmt: str, score: float, truncated: bool) -> str:
    """One chunk in the given format (JSON chunks carry id, type, source and relevance)."""
    if fmt == "json":
        obj = {
            "id": candidate.id,
            "type": _label(candidate),
            "source": candidate.layer_name,
            "relevance": round(score, 4),
            "content": text,
        }
        if candidate.title:
            obj["title"] = candidate.title
        if truncated:
            obj["truncated"] = True
        return json.dumps(obj, ensure_ascii=False)
    if fmt == "markdown":
        heading = f"## {candidate.title}" if candidate.title else f"## {_label(candidate)}"
        meta = f"_{_label(candidate)} · {candidate.layer_name}{' · truncated' if truncated else ''}_"
        return f"{heading}\n{meta}\n\n{text}"
    title = f"{candidate.title}: " if candidate.title else ""
    return f"[{_label(candidate)}] {title}{text}"


def render(pieces: list[str], *, fmt: str) -> str:
    frame = FRAMES[fmt]
    if not pieces:
        return frame.empty
    return frame.head + frame.sep.join(pieces) + frame.tail
