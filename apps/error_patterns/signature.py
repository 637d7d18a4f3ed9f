"""Error signatures: the error normalized so the same failure gives the same string in any language.

What varies between two occurrences of one error is replaced by a placeholder: redaction markers,
URLs, emails, UUIDs, timestamps, file paths (POSIX and Windows), quoted values, hex ids and
addresses, and every standalone number (line numbers, ports, sizes, ids). Stack-frame lines
(`File "...", line N`, `at ...`, `goroutine N`, `#N 0x...`) are dropped: the headline of the
error is what identifies it, not the call path that led there. Digits inside identifiers (E0382,
utf8, int64) are kept.
"""

from __future__ import annotations

import re

MAX_SIGNATURE = 1000
MAX_FRAME_LINE = 1000  # longer lines are never taken for stack frames
# An error longer than this is read as its first and last halves (the headline is first in most
# languages, last in Python's tracebacks); the API takes 20,000 characters.
MAX_ERROR = 100_000

_FRAME_LINES = re.compile(
    r"""^\s*(?:
        traceback\ \(most\ recent\ call\ last\):
      | file\ ["'<].*?["'>]?,\ line\ \d+.*
      | at\ \S.*                                   # Java, JS, C#, Go's "at"
      | \d+:\s+0x[0-9a-f]+.*                       # native backtraces
      | \#\d+\s+.*                                 # gdb / Rust frames
      | goroutine\ \d+\ \[.*
      | \.\.\.\ \d+\ more
      | -->\ .*                                    # rustc's location line
      | \^+~*\s*$                                  # caret markers
      | (?=.*\)$)[\w./*()\-]+?\(.*\)                 # Go's function lines: main.main()
      | (?<=\s)\S+:\d+(?:\ \+0x[0-9a-f]+)?             # Go's file:line +0x1d, indented
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
_SUBSTITUTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[REDACTED:[a-z_]+\]"), "<secret>"),
    (re.compile(r"\b[a-z][a-z0-9+.\-]{0,31}://[^\s\"'<>]+", re.IGNORECASE), "<url>"),
    (re.compile(r"(?<![\w.+\-])[\w.+\-]{1,64}@[\w\-]+(?:\.[\w\-]+)+"), "<email>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), "<uuid>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+\-]\d{2}:?\d{2})?)?\b"
            r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
            r"|\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,? \d{1,2} "
            r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{4}\b",
            re.IGNORECASE,
        ),
        "<time>",
    ),
    (
        re.compile(
            r"(?<![\w.])(?:[a-z]:)?(?:[\\/][\w.\-@+~ ]*?[\w.\-@+~]){2,}[\\/]?(?=$|[\s\"'`),:;\]>])", re.IGNORECASE
        ),
        "<path>",
    ),
    (re.compile(r"(?<![\w/])(?:\.{1,2}|~)(?:/[\w.\-@+~]+)+"), "<path>"),
    (
        re.compile(
            r"(?<![\w\-/])[\w\-]{1,200}(?:/[\w\-]{1,200}){0,30}\.(?:py|js|mjs|cjs|ts|tsx|jsx|rb|go|rs|java|kt|cs|php|c|cc|cpp|h|hpp|swift|scala|ex|exs)\b"
        ),
        "<path>",
    ),
    (
        re.compile(r"\"[^\"\n]*\"|'[^'\n]*'|`[^`\n]*`|«[^»\n]*»|\u201c[^\u201d\n]*\u201d|\u2018[^\u2019\n]*\u2019"),
        "<str>",
    ),
    (re.compile(r"\b0x[0-9a-f]+\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"(?<![\w.])[+\-]?\d+(?:[.,_]\d+)*(?:e[+\-]?\d+)?(?!\d)", re.IGNORECASE), "<n>"),
)
_REPEATS = re.compile(r"(<(?:n|hex|str|path|url|uuid|time|secret|email)>)(?:[\s.,:;x/\-]*\1)+")


def error_signature(error: str) -> str:
    """The language-agnostic signature of `error` (already redacted): lowercased, squeezed, bounded."""
    if len(error) > MAX_ERROR:
        error = error[: MAX_ERROR // 2] + "\n" + error[-MAX_ERROR // 2 :]
    lines: list[str] = []
    in_frame = False
    for line in error.strip().replace("\r\n", "\n").split("\n"):  # not splitlines(): \x1e is not a line end
        if not line.strip():
            continue
        if len(line) <= MAX_FRAME_LINE and _FRAME_LINES.match(line):
            in_frame = line.lstrip().lower().startswith("file ")
            continue
        if in_frame and line[:1].isspace():
            continue  # the source line Python prints under a frame
        in_frame = False
        lines.append(line)
    text = "\n".join(lines) if lines else error
    for pattern, placeholder in _SUBSTITUTIONS:
        text = pattern.sub(placeholder, text)
    text = _REPEATS.sub(r"\1", text)
    return " ".join(text.lower().split())[:MAX_SIGNATURE]


def excerpt(error: str, limit: int = 2000) -> str:
    """The stored excerpt of a (redacted) error: its headline lines first, bounded."""
    return error.strip()[:limit]
