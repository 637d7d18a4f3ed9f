"""The gather pipeline: every configured source in order (settings.CONTEXT_SOURCES), each isolated
and seeing what the ones before it gathered, then the filters every candidate passes, whatever its
source (superseded, already in the prompt, barred by the profile, outside the kinds and types)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from apps.assembly.degraded import skipped_candidates
from apps.assembly.message_rungs import with_written_rungs
from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, configured_sources, left_out
from apps.core.db_health import classify
from apps.core.isolation import isolated
from apps.engine import Candidate, TraceEntry
from apps.engine.policy import admitted
from apps.engine.types import Reason, Source


def gather(request: GatherRequest) -> Gathered:
    """The candidates of every source that passed the filters, what was left out and why, and the
    warnings in the order the sources ran."""
    gathered = _sourced(request, configured_sources())
    kept, dropped = _filtered(request, _written_rungs(request, list(gathered.candidates)))
    return replace(gathered, candidates=tuple(kept), left_out=(*gathered.left_out, *dropped))


def _written_rungs(request: GatherRequest, candidates: list[Candidate]) -> list[Candidate]:
    """Long turns' LLM summaries as their rungs (one query, with an LLM configured); when that query
    fails the turns keep the engine's own rungs, and one that did not finish in time is named skipped."""
    written, error = isolated(lambda: with_written_rungs(candidates), what="the LLM's message summaries")
    if error is not None and classify(error) == "timeout":
        request.deadline.skip("the LLM's message summaries")
    return candidates if written is None else written


def _sourced(request: GatherRequest, sources: tuple[CandidateSource, ...]) -> Gathered:
    """Each source in turn over the gathering so far. The candidates the sources bounded by the
    deadline could not build are named in one warning after them, before the sources that run past it."""
    gathered = Gathered()
    for source in sources:
        if source.past_deadline:
            gathered = _named_skipped(gathered)
            # These run even past the deadline: each is a few indexed queries, and known fixes for a
            # failing agent matter most exactly when it is failing; a slow first request must not drop them.
            request.deadline.check("candidate sources")  # but not past a cancel
        gathered = gathered.adding(_run(source, request, gathered))
    return _named_skipped(gathered)


def _run(source: CandidateSource, request: GatherRequest, gathered: Gathered) -> Found:
    """The source's answer; a failing source is left out with its warning, never failing the request.
    One whose query did not finish in time (a statement or lock timeout: an overloaded or locked
    database) is named skipped too, so the answer is partial and finished in the background."""
    found, error = isolated(partial(source.gather, request, gathered), what=f"candidate source {source.name}")
    if error is not None or found is None:
        if error is not None and classify(error) == "timeout":
            request.deadline.skip(source.name)
        return Found(warnings=(source.failed(),))
    return found


def _named_skipped(gathered: Gathered) -> Gathered:
    if not gathered.skipped:
        return gathered
    return replace(gathered, warnings=(*gathered.warnings, skipped_candidates(list(gathered.skipped))), skipped=())


Check = Callable[[Candidate], TraceEntry | None]  # why a candidate is left out, or None: it passes


def _filtered(request: GatherRequest, candidates: list[Candidate]) -> tuple[list[Candidate], list[TraceEntry]]:
    """The candidates every filter passed, and those left out, filter by filter in candidate order."""
    dropped: list[TraceEntry] = []
    for make in (_superseded, _in_prompt, _profile_excluded, _kinds):
        check = make(request)
        if check is None:
            continue
        verdicts = [check(c) for c in candidates]
        dropped += [v for v in verdicts if v is not None]
        candidates = [c for c, v in zip(candidates, verdicts, strict=True) if v is None]
    return candidates, dropped


def _superseded(request: GatherRequest) -> Check | None:
    """A newer item replaces them: out, saying which."""
    if request.params.include_superseded:
        return None
    return lambda c: (
        None if c.superseded_by is None else replace(left_out(c, Reason.SUPERSEDED), superseded_by=c.superseded_by)
    )


def _in_prompt(request: GatherRequest) -> Check | None:
    """What the caller's prompt carries already is not sent twice."""
    if not request.params.exclude:
        return None
    carried = frozenset(request.params.exclude)
    return lambda c: left_out(c, Reason.IN_PROMPT) if f"{c.source}:{c.id}" in carried else None


def _profile_excluded(request: GatherRequest) -> Check | None:
    """The profile's own exclusions (the preview's "exclude from this profile"), pinned items too."""
    profile = request.resolved.profile
    barred = frozenset(profile.excluded_items or ()) if profile is not None else frozenset()
    if not barred:
        return None
    return lambda c: left_out(c, Reason.PROFILE_EXCLUDED) if c.source == Source.ITEM and c.id in barred else None


def _kinds(request: GatherRequest) -> Check | None:
    """Every source honours the kinds and types filters, not only the searches."""
    kinds, types = tuple(request.params.kinds), request.resolved.types
    if not (kinds or types):
        return None
    return lambda c: None if admitted(c, kinds=kinds, types=types) else left_out(c, Reason.KIND_FILTER)
