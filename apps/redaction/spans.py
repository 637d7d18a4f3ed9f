"""A finding is a span of the original text and the type of what it holds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    type: str


Finder = Callable[[str], Iterator[Span]]
