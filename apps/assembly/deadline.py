"""Latency control for assembly. The deadline and its cancel are shared with the history
tool (apps/core/deadline.py); the searches it bounds are the shared hybrid search's
(apps/layers/hybrid_search.py, with the keyword floor)."""

from __future__ import annotations

from apps.core.deadline import Cancelled, Deadline
from apps.layers.hybrid_search import KEYWORD_FLOOR_MS

AssemblyCancelled = Cancelled  # the caller cancelled the assembly; it stopped before `.stage`

__all__ = ["KEYWORD_FLOOR_MS", "AssemblyCancelled", "Deadline"]
