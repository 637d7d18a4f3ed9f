"""The context-assembly engine: ranking, budgeting, packing, truncation and formatting.

Pure Python over frozen dataclasses, with no ORM and no I/O: services gather candidates and a
token counter, call `rank` then `assemble`, and store the trace. The invariant it keeps: the
returned context's own token count (by the counter it was given) never exceeds the budget.
"""

from __future__ import annotations

from apps.engine.format import BUILTIN_TEMPLATES, FORMATS, Template, TemplateError
from apps.engine.pack import assemble
from apps.engine.policy import PRESETS, Resolution, ZoneThresholds, zone_for
from apps.engine.rank import RankContext, RankWeights, Scorer, rank, recency_score, weighted_score
from apps.engine.types import Assembled, Candidate, Chunk, Counter, Rung, Scored, TraceEntry

__all__ = [
    "BUILTIN_TEMPLATES",
    "FORMATS",
    "PRESETS",
    "Assembled",
    "Candidate",
    "Chunk",
    "Counter",
    "RankContext",
    "RankWeights",
    "Resolution",
    "Rung",
    "Scored",
    "Scorer",
    "Template",
    "TemplateError",
    "TraceEntry",
    "ZoneThresholds",
    "assemble",
    "rank",
    "recency_score",
    "weighted_score",
    "zone_for",
]
