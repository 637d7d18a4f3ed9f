"""Pluggable candidate sources beyond retrieval (settings.CONTEXT_SOURCES): error-pattern hints
(`error_hints.py`) and conversation communities (`communities.py`).

A source gets the resolved request and returns candidates; it must not fail the request: the
service catches its errors and turns them into a warning: a source never fails the request.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from django.conf import settings
from django.utils.module_loading import import_string

from apps.engine import Candidate


@dataclass(frozen=True)
class SourceRequest:
    """What a candidate source may use to find candidates."""

    workspace_id: int
    layer_id: int
    layer_name: str
    query: str
    error: str
    agent_type: str
    group_id: str
    window_layer_ids: tuple[int, ...] = ()  # the conversation window's layers
    summary_distance: int = 20  # window messages beyond it may be stood in for by a community
    query_vector: np.ndarray | None = None  # the query's vector, when there is one (ranks by similarity)


class CandidateSource(Protocol):
    name: str

    def candidates(self, request: SourceRequest) -> list[Candidate]: ...


@functools.cache
def configured_sources() -> tuple[CandidateSource, ...]:
    return tuple(import_string(path)() for path in settings.CONTEXT_SOURCES)
