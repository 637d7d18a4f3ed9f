"""Context assembly services: `context_assemble` (the hot path), `context_preview`, `context_warm`.

- `assembling.py`: resolve, gather candidates, rank and pack within the deadline (no writes);
- `context.py`: the cache in front, the record behind, the bookkeeping (access counts, hints);
- `preview.py`: the same assembly with the full trace and a what-if table;
- `pinned.py`: a request packed again with one candidate pinned (the trace page's "why not?");
- `cancel.py`: the cancel path both share (a client that left: counted, nothing recorded);
- `record.py`: the `AssemblyRecord` of each answer, with its stage timings and warnings, written after
  the answer by `record_writer.py` (batched, one thread per process; `records_flush()` before reading one);
- `cache.py`: the assembly cache (finished results only, keyed by the content version);
- `consumption.py`: an agent's report of the packages it used, stored on the record.
"""

from __future__ import annotations

from apps.assembly.results import ContextResult, PreviewResult, WhatIf
from apps.assembly.services.context import context_assemble, context_warm
from apps.assembly.services.pinned import PinnedPacking, context_pinned
from apps.assembly.services.preview import WHAT_IF_BUDGETS, context_preview
from apps.assembly.services.record_writer import records_flush

__all__ = [
    "WHAT_IF_BUDGETS",
    "ContextResult",
    "PinnedPacking",
    "PreviewResult",
    "WhatIf",
    "context_assemble",
    "context_pinned",
    "context_preview",
    "context_warm",
    "records_flush",
]
