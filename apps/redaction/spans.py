"""A finding is a span of the original text and the type of what it holds."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    type: str


Finder = Callable[[str], Iterator[Span]]


def regex_finder(kind: str, pattern: re.Pattern[str]) -> Finder:
    """Every match of `pattern` (or its `secret` group when it has one) as a `kind` span."""
    group = "secret" if "secret" in pattern.groupindex else 0

    def find(text: str) -> Iterator[Span]:
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if end > start:
                yield Span(start, end, kind)

    return find
