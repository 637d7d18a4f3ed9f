"""The redactor: every detector's findings, merged, minus the allow-list, replaced by `[REDACTED:<type>]`.

Order of the finders is their priority when findings overlap: a known format names the type
(`github_token`), then the context a value stands in (`password`), then personal data, then
entropy. Overlapping findings are merged into one span, so a secret is never half-redacted.
Redacting twice changes nothing: existing `[REDACTED:...]` markers are left as they are.
"""

from __future__ import annotations

import bisect
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from apps.redaction.allowpatterns import MATCH_BUDGET_SECONDS, AllowPattern, fullmatch, log_budget_spent
from apps.redaction.context import CONTEXT_FINDERS
from apps.redaction.entropy import ENTROPY_FINDERS
from apps.redaction.named import NAMED_FINDERS
from apps.redaction.pii import PII_FINDERS
from apps.redaction.spans import Finder, Span
from apps.redaction.tokens import TOKEN_DETECTORS, could_hold_token, token_matches

# The shape detectors come first, as (type, pattern, group redacted: `secret` when it has one). They
# run in one loop in `_candidates`: a generator per detector cost more than its regex on a short query.
TOKENS: tuple[tuple[str, re.Pattern[str], str | int], ...] = tuple(
    (kind, pattern, "secret" if "secret" in pattern.groupindex else 0) for kind, pattern in TOKEN_DETECTORS
)
# The other finders, in priority order after the shape detectors.
FINDERS: tuple[Finder, ...] = (
    *CONTEXT_FINDERS,
    *NAMED_FINDERS,
    *PII_FINDERS,
    *ENTROPY_FINDERS,
)
_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")


@dataclass(frozen=True)
class Allow:
    """A workspace's allow-list: exact values and full-match patterns (RE2) that are not secrets.

    One Allow serves one redaction: its patterns share one time budget, and once it is spent no
    pattern allows anything more (the finding is redacted, the safe side).
    """

    exact: frozenset[str] = frozenset()
    patterns: tuple[AllowPattern, ...] = ()
    spent: list[float] = field(default_factory=lambda: [0.0], compare=False, repr=False)

    def allows(self, value: str) -> bool:
        """Whether `value` is a kept false positive."""
        value = value.strip()
        if value in self.exact:
            return True
        if not self.patterns or self.spent[0] > MATCH_BUDGET_SECONDS:
            return False
        started = time.perf_counter()
        try:
            return any(fullmatch(pattern, value) for pattern in self.patterns)
        finally:
            self.spent[0] += time.perf_counter() - started
            if self.spent[0] > MATCH_BUDGET_SECONDS:
                log_budget_spent(len(self.patterns))


NO_ALLOW = Allow()


@dataclass(frozen=True)
class Redaction:
    text: str
    findings: tuple[Span, ...]  # positions in the original text

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "findings": [{"type": f.type, "start": f.start, "end": f.end} for f in self.findings],
        }


# Every detector is linear in the text (tests/redaction/test_linear_time.py); the budget is the
# backstop: a redaction still running after it stops between two detectors and refuses the text,
# so a detector found quadratic later costs one budget, not a worker for minutes.
MAX_TEXT = 200_000
BUDGET_SECONDS = 10.0


class RedactionTooCostly(Exception):
    """The text is over MAX_TEXT, or redacting it took more than BUDGET_SECONDS: nothing is returned."""


def find(text: str, *, allow: Allow = NO_ALLOW) -> list[Span]:
    """Merged, non-overlapping findings in `text`, in order."""
    if not text:
        return []
    if len(text) > MAX_TEXT:
        raise RedactionTooCostly(f"a text to redact is at most {MAX_TEXT} characters")
    markers = [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []
    marker_ends = [end for _, end in markers]
    found: list[tuple[int, Span]] = []
    for priority, span in _candidates(text, deadline=time.monotonic() + BUDGET_SECONDS):
        if markers:
            # The first marker ending after the span starts is the only one that can overlap it first.
            index = bisect.bisect_right(marker_ends, span.start)
            if index < len(markers) and markers[index][0] < span.end:
                continue
        if allow is not NO_ALLOW and allow.allows(text[span.start : span.end]):
            continue
        found.append((priority, span))
    return _merge(found)


def _candidates(text: str, *, deadline: float) -> Iterator[tuple[int, Span]]:
    """Every finder's spans with its priority (its place in TOKENS, then FINDERS), unmerged."""
    for priority, (kind, pattern, group) in enumerate(TOKENS if could_hold_token(text) else ()):
        _check(deadline)
        for match in token_matches(pattern, text):
            start, end = match.span(group)
            if end > start:
                yield priority, Span(start, end, kind)
    for priority, finder in enumerate(FINDERS, start=len(TOKENS)):
        _check(deadline)
        for span in finder(text):
            yield priority, span


def _check(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise RedactionTooCostly(f"redacting this text took over {BUDGET_SECONDS:g} s")


def _merge(found: Iterable[tuple[int, Span]]) -> list[Span]:
    merged: list[tuple[int, Span]] = []
    for priority, span in sorted(found, key=lambda f: (f[1].start, -f[1].end, f[0])):
        if merged and span.start < merged[-1][1].end:
            best, last = merged[-1]
            kind = last.type if best <= priority else span.type
            merged[-1] = (min(best, priority), Span(last.start, max(last.end, span.end), kind))
        else:
            merged.append((priority, span))
    return [span for _, span in merged]


def redact(text: str, *, allow: Allow = NO_ALLOW) -> Redaction:
    """`text` with every finding replaced by `[REDACTED:<type>]`."""
    findings = find(text, allow=allow)
    if not findings:
        return Redaction(text=text, findings=())
    pieces: list[str] = []
    position = 0
    for span in findings:
        pieces.append(text[position : span.start])
        pieces.append(f"[REDACTED:{span.type}]")
        position = span.end
    pieces.append(text[position:])
    return Redaction(text="".join(pieces), findings=tuple(findings))
