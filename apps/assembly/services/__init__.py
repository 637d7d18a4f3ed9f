"""Context assembly services: `context_assemble` (the hot path), `context_preview`, `context_warm`.

- `assembling.py`: resolve, gather candidates, rank and pack within the deadline (no writes);
- `context.py`: the cache in front, the record behind, the bookkeeping (access counts, hints);
- `preview.py`: the same assembly with the full trace and a what-if table;
- `record.py`: the `AssemblyRecord` of each answer, with its stage timings and warnings, written after
  the answer by `record_writer.py` (batched, one thread per process; `records_flush()` before reading one);
- `cache.py`: the assembly cache (finished results only, keyed by the content version).
"""

from __future__ import annotations

from apps.assembly.results import ContextResult, PreviewResult, WhatIf
from apps.assembly.services.context import context_assemble, context_warm
from apps.assembly.services.preview import WHAT_IF_BUDGETS, context_preview
from apps.assembly.services.record_writer import records_flush

__all__ = [
    "WHAT_IF_BUDGETS",
    "ContextResult",
    "PreviewResult",
    "WhatIf",
    "context_assemble",
    "context_preview",
    "context_warm",
    "records_flush",
]
