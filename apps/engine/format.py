"""Output formats and templates: each chunk renders to a piece; pieces are joined inside a frame.

The context string is exactly `head + sep.join(blocks) + tail`, where a block is one piece or, in
text format, one day's conversation turns under a single `[YYYY-MM-DD]` line (`render_days`);
the packer estimates cost piece by piece (a day's header once, with its first turn) and then
verifies the whole string with one exact count. JSON chunks carry
id, type, source and relevance and their metadata;
Markdown has headers. A template renders each chunk from
variables, with an optional body per type.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from dataclasses import dataclass, field

from apps.engine.types import Candidate

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


# Expansion caps: a chunk's rendering is at most this many fields, and its text at most twice, so
# a template cannot multiply the cost of rendering and counting every rung it tries ("{content}" *
# 555, within the body's 5,000 characters, made one request take 35 s).
TEMPLATE_MAX_FIELDS = 20
TEMPLATE_MAX_CONTENT = 2


def check_template(text: str) -> None:
    """Only `{variable}` fields from TEMPLATE_VARIABLES: no attributes, indexes, conversions or specs;
    at most TEMPLATE_MAX_FIELDS fields, `{content}` at most TEMPLATE_MAX_CONTENT times."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise TemplateError(f"malformed template: {exc}") from exc
    names = [name for _, name, _, _ in parsed if name is not None]
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_VARIABLES or spec or conversion:
            allowed = ", ".join(sorted(TEMPLATE_VARIABLES))
            raise TemplateError(f"template field {{{name}}} is not allowed; use plain {{name}} with one of: {allowed}")
    if len(names) > TEMPLATE_MAX_FIELDS:
        raise TemplateError(f"a template has at most {TEMPLATE_MAX_FIELDS} fields, this one {len(names)}")
    if names.count("content") > TEMPLATE_MAX_CONTENT:
        raise TemplateError(f"{{content}} appears at most {TEMPLATE_MAX_CONTENT} times in a template")


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
    in_day: bool = False,
) -> str:
    """One chunk in the given format (a template, when given, shapes text and markdown chunks).

    `in_day`: a text-format turn that `render_days` puts under its day's header, so it says only
    who spoke (see `groups_by_day`)."""
    if fmt == "json":
        obj: dict[str, object] = {
            "id": candidate.id,
            "type": label(candidate),
            "source": candidate.layer_name,
            "relevance": round(score, 4),
            "content": text,
        }
        obj["timestamp"] = candidate.created_at.isoformat(timespec="seconds")  # every chunk has its time
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
        if in_day:
            return f"[{candidate.role}] {text}"
        return f"[{candidate.role} {day(candidate)}] {text}"
    title = f"{candidate.title}: " if candidate.title and depth != "title" else ""
    return f"[{' '.join(_metadata(candidate))}] {title}{text}"


def _metadata(candidate: Candidate) -> list[str]:
    """Type, day and confidence of a chunk that is not a turn (memories are shown
    with their type, confidence and timestamp), in the fewest tokens: `memory/fact 2026-11-20 0.90`."""
    parts = [label(candidate), day(candidate)]
    if candidate.confidence is not None:
        parts.append(f"{candidate.confidence:.2f}")
    return parts


def _heading(candidate: Candidate, depth: str, truncated: bool) -> str:
    """A compact one-line header: every token spent here is a token of content lost."""
    if candidate.role:  # a conversation turn: who said it, and when (the day is what questions ask about)
        parts = [candidate.role, day(candidate)]
    elif candidate.title:
        parts = [candidate.title, *_metadata(candidate), candidate.layer_name]
    else:
        parts = [*_metadata(candidate), candidate.layer_name]
    if depth not in ("full", "detailed"):
        parts.append(depth)
    if truncated:
        parts.append("truncated")
    return " · ".join(p for p in parts if p)


def day(candidate: Candidate) -> str:
    """The turn's day as `YYYY-MM-DD` (what strftime("%Y-%m-%d") gives, without its ~3 µs per call)."""
    at = candidate.created_at
    if at.year < 1000:  # strftime's %Y does not pad such years on every platform: let it decide
        return at.strftime("%Y-%m-%d")
    return f"{at.year}-{at.month:02d}-{at.day:02d}"


def groups_by_day(candidate: Candidate, *, fmt: str, template: Template | None) -> bool:
    """Whether a chunk is a conversation turn that `render_days` groups under its day's header.

    Text format without a template: a turn's `[user 2023-05-08] ` costs 10 tokens of a ~34-token
    LoCoMo turn; under one `[2023-05-08]` line per day each turn keeps only `[user] ` (2 tokens)."""
    return groups_by_day_in(fmt=fmt, template=template) and candidate.kind == "message" and bool(candidate.role)


def groups_by_day_in(*, fmt: str, template: Template | None) -> bool:
    """Whether this format groups turns by day at all (`groups_by_day`'s part that holds for every chunk)."""
    return fmt == "text" and template is None


def day_header(candidate: Candidate) -> str:
    return f"[{day(candidate)}]\n"


def render_days(entries: list[tuple[Candidate, str, bool]], *, fmt: str) -> str:
    """The context from (candidate, piece, in_day) in priority order: pieces of turns marked
    `in_day` are gathered under one header per day, at the place of that day's first turn, in the
    order they were said, one line each; every other piece stays where it is."""
    blocks: list[str | list[tuple[Candidate, str]]] = []
    days: dict[str, list[tuple[Candidate, str]]] = {}
    for candidate, piece, in_day in entries:
        if not in_day:
            blocks.append(piece)
            continue
        key = day(candidate)
        if key not in days:
            days[key] = []
            blocks.append(days[key])
        days[key].append((candidate, piece))
    pieces = [
        block
        if isinstance(block, str)
        else day_header(block[0][0])
        + "\n".join(piece for _, piece in sorted(block, key=lambda e: (e[0].created_at, e[0].id)))
        for block in blocks
    ]
    return render(pieces, fmt=fmt)


def render(pieces: list[str], *, fmt: str) -> str:
    frame = FRAMES[fmt]
    if not pieces:
        return frame.empty
    return frame.head + frame.sep.join(pieces) + frame.tail
