"""The redactor: every detector's findings, merged, minus the allow-list, replaced by `[REDACTED:<type>]`.

Order of the finders is their priority when findings overlap: a known format names the type
(`github_token`), then the context a value stands in (`password`), then personal data, then
entropy. Overlapping findings are merged into one span, so a secret is never half-redacted.
Redacting twice changes nothing: existing `[REDACTED:...]` markers are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from apps.redaction.allowpatterns import AllowPattern, fullmatch
from apps.redaction.context import CONTEXT_FINDERS
from apps.redaction.entropy import ENTROPY_FINDERS
from apps.redaction.named import NAMED_FINDERS
from apps.redaction.pii import PII_FINDERS
from apps.redaction.spans import Finder, Span, regex_finder
from apps.redaction.tokens import TOKEN_DETECTORS

FINDERS: tuple[Finder, ...] = (
    *(regex_finder(kind, pattern) for kind, pattern in TOKEN_DETECTORS),
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
    markers = [m.span() for m in _MARKER.finditer(text)]
    found: list[tuple[int, Span]] = []
    for priority, finder in enumerate(FINDERS):
        for span in finder(text):
            if any(span.start < end and start < span.end for start, end in markers):
                continue
            if allow is not NO_ALLOW and allow.allows(text[span.start : span.end]):
                continue
            found.append((priority, span))
    return _merge(found)


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
