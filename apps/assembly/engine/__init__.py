"""The context-assembly engine: ranking, budgeting, packing, truncation and formatting.

Pure Python over frozen dataclasses, with no ORM and no I/O: services gather candidates and a
token counter, call `assemble`, and store the trace. The invariant it keeps: the returned
context's own token count (by the counter it was given) never exceeds the budget.
"""

from __future__ import annotations

from apps.assembly.engine.pack import assemble
from apps.assembly.engine.rank import RankWeights, rank
from apps.assembly.engine.types import Assembled, Candidate, Chunk, Counter, TraceEntry

__all__ = ["Assembled", "Candidate", "Chunk", "Counter", "RankWeights", "TraceEntry", "assemble", "rank"]
