"""The redactor: every detector's findings, merged, minus the allow-list, replaced by `[REDACTED:<type>]`.

Order of the finders is their priority when findings overlap: a known format names the type
(`github_token`), then the context a value stands in (`password`), then personal data, then
entropy. Overlapping findings are merged into one span, so a secret is never half-redacted.
Redacting twice changes nothing: existing `[REDACTED:...]` markers are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from apps.redaction.allowpatterns import AllowPattern, fullmatch
from apps.redaction.context import CONTEXT_FINDERS
from apps.redaction.entropy import ENTROPY_FINDERS
from apps.redaction.named import NAMED_FINDERS
from apps.redaction.pii import PII_FINDERS
from apps.redaction.spans import Finder, Span
from apps.redaction.tokens import TOKEN_DETECTORS, could_hold_token

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
    """A workspace's allow-list: exact values and full-match patterns that are not secrets."""

    exact: frozenset[str] = frozenset()
    patterns: tuple[AllowPattern, ...] = ()
    # Patterns that ran out of time once: skipped for the rest of this Allow's life (one request).
    slow: set[int] = field(default_factory=set, compare=False, repr=False)

    def allows(self, value: str) -> bool:
        """Whether `value` is a kept false positive; a pattern that times out does not allow it."""
        value = value.strip()
        if value in self.exact:
            return True
        for index, pattern in enumerate(self.patterns):
            if index in self.slow:
                continue
            matched = fullmatch(pattern, value)
            if matched is None:
                self.slow.add(index)
            elif matched:
                return True
        return False


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


def find(text: str, *, allow: Allow = NO_ALLOW) -> list[Span]:
    """Merged, non-overlapping findings in `text`, in order."""
    if not text:
        return []
    markers = [m.span() for m in _MARKER.finditer(text)] if "[REDACTED:" in text else []
    found: list[tuple[int, Span]] = []
    for priority, span in _candidates(text):
        if markers and any(span.start < end and start < span.end for start, end in markers):
            continue
        if allow is not NO_ALLOW and allow.allows(text[span.start : span.end]):
            continue
        found.append((priority, span))
    return _merge(found)


def _candidates(text: str) -> Iterator[tuple[int, Span]]:
    """Every finder's spans with its priority (its place in TOKENS, then FINDERS), unmerged."""
    for priority, (kind, pattern, group) in enumerate(TOKENS if could_hold_token(text) else ()):
        for match in pattern.finditer(text):
            start, end = match.span(group)
            if end > start:
                yield priority, Span(start, end, kind)
    for priority, finder in enumerate(FINDERS, start=len(TOKENS)):
        for span in finder(text):
            yield priority, span


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
