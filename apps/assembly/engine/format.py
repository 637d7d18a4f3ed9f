"""Output formats and templates: each chunk renders to a piece; pieces are joined inside a frame.

The context string is exactly `head + sep.join(pieces) + tail`, which lets the packer estimate
cost piece by piece and then verify the whole string with one exact count. JSON chunks carry
id, type, source and relevance (seed 004 property 6) and their metadata (seed 003 req. 3.7);
Markdown has headers (property 7). A template (seed 003 req. 7) renders each chunk from
variables, with an optional body per type.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

from apps.assembly.engine.types import Candidate

FORMATS = ("json", "markdown", "text")
TEMPLATE_VARIABLES = frozenset(
    {"content", "type", "kind", "confidence", "timestamp", "layer", "title", "depth", "score", "role", "priority"}
)


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


class TemplateError(ValueError):
    """A template uses something other than plain {variable} fields."""


@dataclass(frozen=True)
class Template:
    """A chunk template: `body` for every chunk, or `by_type[type or kind]` when one matches."""

    name: str
    body: str
    by_type: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for text in (self.body, *self.by_type.values()):
            check_template(text)

    def for_candidate(self, candidate: Candidate) -> str:
        return self.by_type.get(candidate.type) or self.by_type.get(candidate.kind) or self.body


def check_template(text: str) -> None:
    """Only `{variable}` fields from TEMPLATE_VARIABLES: no attributes, indexes, conversions or specs."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateError(f"malformed template: {exc}") from exc
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_VARIABLES or spec or conversion:
            allowed = ", ".join(sorted(TEMPLATE_VARIABLES))
            raise TemplateError(f"template field {{{name}}} is not allowed; use plain {{name}} with one of: {allowed}")


BUILTIN_TEMPLATES: dict[str, Template] = {
    "chat": Template(name="chat", body="[{type}] {content}"),
    "summary": Template(name="summary", body="- {content}"),
    "detailed": Template(
        name="detailed",
        body="### {title}\n_{type} · {layer} · {timestamp}_\n\n{content}",
        by_type={
            "decision": "### Decision: {title}\n_{layer} · {timestamp}_\n\n{content}",
            "fact": "### Fact ({confidence}): {title}\n_{layer} · {timestamp}_\n\n{content}",
            "error_hint": "### Known fix ({confidence})\n{content}",
        },
    ),
}


def label(candidate: Candidate) -> str:
    return f"{candidate.kind}/{candidate.type}" if candidate.type else candidate.kind


def _variables(candidate: Candidate, text: str, depth: str, score: float) -> dict[str, str]:
    return {
        "content": text,
        "type": label(candidate),
        "kind": candidate.kind,
        "confidence": "" if candidate.confidence is None else f"{candidate.confidence:.2f}",
        "timestamp": candidate.created_at.isoformat(timespec="seconds"),
        "layer": candidate.layer_name,
        "title": candidate.title or label(candidate),
        "depth": depth,
        "score": f"{score:.3f}",
        "role": candidate.role,
        "priority": candidate.priority,
    }


def render_piece(
    candidate: Candidate,
    text: str,
    *,
    fmt: str,
    score: float,
    truncated: bool,
    depth: str = "full",
    template: Template | None = None,
) -> str:
    """One chunk in the given format (a template, when given, shapes text and markdown chunks)."""
    if fmt == "json":
        obj: dict[str, object] = {
            "id": candidate.id,
            "type": label(candidate),
            "source": candidate.layer_name,
            "relevance": round(score, 4),
            "content": text,
        }
        if candidate.kind == "message":  # when a turn was said matters; elsewhere the API's chunk has it
            obj["timestamp"] = candidate.created_at.isoformat(timespec="seconds")
        if candidate.source != "item":
            obj["origin"] = candidate.source
        if candidate.title:
            obj["title"] = candidate.title
        if candidate.role:
            obj["role"] = candidate.role
        if candidate.confidence is not None:
            obj["confidence"] = round(candidate.confidence, 3)
        if depth not in ("full", "detailed"):
            obj["depth"] = depth
        if truncated:
            obj["truncated"] = True
        return json.dumps(obj, ensure_ascii=False)
    if template is not None:
        return template.for_candidate(candidate).format_map(_variables(candidate, text, depth, score))
    if fmt == "markdown":
        return f"### {_heading(candidate, depth, truncated)}\n{text}"
    if candidate.role:
        return f"[{candidate.role} {candidate.created_at.strftime('%Y-%m-%d')}] {text}"
    title = f"{candidate.title}: " if candidate.title and depth != "title" else ""
    return f"[{label(candidate)}] {title}{text}"


def _heading(candidate: Candidate, depth: str, truncated: bool) -> str:
    """A compact one-line header: every token spent here is a token of content lost."""
    if candidate.role:  # a conversation turn: who said it, and when (the day is what questions ask about)
        parts = [candidate.role, candidate.created_at.strftime("%Y-%m-%d")]
    elif candidate.title:
        parts = [candidate.title, label(candidate), candidate.layer_name]
    else:
        parts = [label(candidate), candidate.layer_name]
    if depth not in ("full", "detailed"):
        parts.append(depth)
    if truncated:
        parts.append("truncated")
    return " · ".join(p for p in parts if p)


def render(pieces: list[str], *, fmt: str) -> str:
    frame = FRAMES[fmt]
    if not pieces:
        return frame.empty
    return frame.head + frame.sep.join(pieces) + frame.tail
