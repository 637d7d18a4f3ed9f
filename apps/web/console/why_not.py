"""The trace page's "why not?": the recorded request assembled now and packed with one candidate pinned
(apps/assembly/services/pinned.py), told as the page shows it: the candidate's decision today and
pinned, and the chunks pinning it would push out, each with its text.

Like Replay it runs against today's content (the record keeps the request, not the candidates), and
unlike Replay it leaves no record: nothing was served to anyone.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.assembly.errors import TRACE_NOT_FOUND
from apps.assembly.models import AssemblyRecord
from apps.assembly.selectors import assembly_record_get
from apps.assembly.services import context_pinned
from apps.core.errors import InvalidInput
from apps.engine import TraceEntry
from apps.web.console.replay import replay_params
from apps.web.selectors.candidates import CandidateRow, reason_text, trace_rows


@dataclass(frozen=True)
class WhyNot:
    """What pinning the candidate would do to the recorded request's context today."""

    candidate: CandidateRow | None  # its row in today's packing (None: not a candidate today)
    now: str  # its decision today, in words
    pinned: str  # its decision when pinned, in words ("" when it could not be pinned into this packing)
    fits_pinned: bool
    displaced: list[CandidateRow]
    tokens_now: int
    tokens_pinned: int
    budget: int
    notes: list[str]
    pinnable: bool  # an item (only items carry a pin)

    @property
    def displaced_tokens(self) -> int:
        return sum(row.tokens for row in self.displaced)


def _words(entry: TraceEntry | None) -> str:
    if entry is None:
        return "not a candidate today"
    if entry.decision == "included":
        return f"in at {entry.depth} ({entry.tokens} tokens)"
    if entry.decision == "truncated":
        return f"in, cut to {entry.tokens} tokens"
    return f"left out: {reason_text(entry.reason, entry.superseded_by)}"


def why_not(*, record: AssemblyRecord, source: str, candidate_id: int) -> WhyNot:
    """Pack `record`'s request now with (source, candidate_id) pinned; DomainError when it cannot run."""
    request = record.request if isinstance(record.request, dict) else {}
    layer_id = record.layer_id
    if request.get("cached_from"):
        original = assembly_record_get(workspace_id=record.workspace_id, trace_id=request["cached_from"])
        if original is None:
            raise InvalidInput("the answer this cache hit came from is no longer recorded", code=TRACE_NOT_FOUND)
        request = original.request if isinstance(original.request, dict) else {}
        layer_id = original.layer_id
    params, notes = replay_params(request=request, layer_id=layer_id)
    packed = context_pinned(workspace=record.workspace, params=params, source=source, candidate_id=candidate_id)
    entries = [e for e in (packed.now, packed.pinned, *packed.displaced) if e is not None]
    rows = trace_rows(workspace_id=record.workspace_id, trace=[e.as_dict() for e in entries])
    by_key = {(row.source, row.id): row for row in rows}
    if packed.now is not None and packed.pinned is None:
        notes.append("it is not among today's ranked candidates, so it cannot be pinned into this packing")
    return WhyNot(
        candidate=by_key.get((source, candidate_id)),
        now=_words(packed.now),
        pinned=_words(packed.pinned) if packed.pinned is not None else "",
        fits_pinned=packed.pinned is not None and packed.pinned.decision != "excluded",
        displaced=[by_key[(e.source, e.id)] for e in packed.displaced],
        tokens_now=packed.tokens_now,
        tokens_pinned=packed.tokens_pinned,
        budget=packed.budget,
        notes=notes,
        pinnable=source == "item",
    )
