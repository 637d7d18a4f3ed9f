"""Name/value entries (`- name: DB_PASSWORD` / `value: ...`, `{"name": ..., "value": ...}`), found in linear time.

`_NAME_THEN_VALUE` and `_VALUE_THEN_NAME` say what an entry is. Run as they are, they are quadratic:
a bare value is a lazy run to the end of its line, so `value:` repeated N times on one line scans
the line N times (29 minutes at 200k characters), and a run of spaces after a value is tried split
three ways. The scanners below match each entry's head with a bounded regex and find where its
bare value ends from lists of positions made once per text (stops, `name` keywords), bisected: the
same entries, the same groups (tests/redaction/test_linear_time.py compares them).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

_VALUE = (
    r"""(?:(?P<q{n}>["'])(?P<qv{n}>(?:(?!(?P=q{n}))[^\n\\]|\\.){{1,500}})(?P=q{n})|(?P<uv{n}>[^\s"'#,}}][^\n#,}}]*?))"""
)
_NAME_THEN_VALUE = re.compile(
    r"""(?ix)["']?\bname["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})["']?[ \t]*,?
    (?:[ \t]*\r?\n(?:[ \t]*\#[^\n]*\r?\n)?[ \t]*|[ \t]*)
    ["']?\bvalue["']?[ \t]*[:=][ \t]*"""
    + _VALUE.format(n=1)
    + r"""[ \t]*(?=[,}\]\r\n]|$)"""
)
_VALUE_THEN_NAME = re.compile(
    r"""(?ix)["']?\bvalue["']?[ \t]*[:=][ \t]*"""
    + _VALUE.format(n=2)
    + r"""[ \t]*,?(?:[ \t]*\r?\n[ \t]*|[ \t]*)"""
    + r"""["']?\bname["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"""
)

# The same, cut where a bare value starts; the spaces around `,` and the line break are written so
# that a run of them has one parse (`[ \t]*,?(?:[ \t]*\r?\n[ \t]*|[ \t]*)` has three).
_NAME_THEN_VALUE_HEAD = re.compile(
    r"""(?ix)["']?\bname["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})["']?
    [ \t]*(?:,[ \t]*)?(?:\r?\n(?:[ \t]*\#[^\n]*\r?\n)?[ \t]*)?
    ["']?\bvalue["']?[ \t]*[:=][ \t]*"""
)
_QUOTED_THEN_END = re.compile(r"""(?P<q>["'])(?P<qv>(?:(?!(?P=q))[^\n\\]|\\.){1,500})(?P=q)[ \t]*(?=[,}\]\r\n]|$)""")
_VALUE_THEN_NAME_HEAD = re.compile(r"""(?ix)["']?\bvalue["']?[ \t]*[:=][ \t]*""")
_NAME_TAIL = r"""["']?\bname["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})"""
_QUOTED_THEN_NAME = re.compile(
    r"""(?i)(?P<q>["'])(?P<qv>(?:(?!(?P=q))[^\n\\]|\\.){1,500})(?P=q)[ \t]*(?:,[ \t]*)?(?:\r?\n[ \t]*)?""" + _NAME_TAIL
)
_NAME_WORD = re.compile(r"(?i)\bname")
_NAME_KEY = re.compile(r"""(?i)\bname["']?[ \t]*[:=][ \t]*["']?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})""")
_BARE_FIRST = re.compile(r"""[^\s"'#,}]""")
_NAME_THEN_VALUE_STOPS = re.compile(r"[\n#,}\]\r]")  # a bare value holds none; it ends at the first
_VALUE_THEN_NAME_STOPS = re.compile(r"[\n#,}]")


@dataclass(frozen=True)
class Entry:
    name: str
    value_start: int
    value_end: int  # the value as the pattern's group holds it (a bare one may end in spaces)


class _Positions:
    """Positions of one text listed once, bisected for each entry."""

    def __init__(self, text: str, characters: re.Pattern[str]) -> None:
        self.positions = [m.start() for m in characters.finditer(text)]
        self.length = len(text)

    def first_from(self, start: int) -> int:
        """The first listed position at or after `start`, or the text's length."""
        index = bisect.bisect_left(self.positions, start)
        return self.positions[index] if index < len(self.positions) else self.length


def name_then_value(text: str) -> Iterator[Entry]:
    """What `_NAME_THEN_VALUE.finditer(text)` finds.

    A bare value runs to the first `,`, `}`, `]`, `\\r`, newline or `#` (it holds none of them, and
    stops at the first of the delimiters), less its trailing spaces; at `#` there is no entry.
    """
    stops: _Positions | None = None
    position = 0
    while (head := _NAME_THEN_VALUE_HEAD.search(text, position)) is not None:
        start = head.end()
        quoted = _QUOTED_THEN_END.match(text, start)
        if quoted is not None:
            yield Entry(head.group("name"), quoted.start("qv"), quoted.end("qv"))
            position = quoted.end()
            continue
        if _BARE_FIRST.match(text, start):
            stops = stops or _Positions(text, _NAME_THEN_VALUE_STOPS)
            stop = stops.first_from(start + 1)
            if stop == len(text) or text[stop] != "#":
                end = max(start + 1, len(text[start:stop].rstrip(" \t")) + start)
                yield Entry(head.group("name"), start, end)
                position = stop
                continue
        position = head.start() + 1  # no entry here: the pattern goes on from the next character


class _NameKeys:
    """Every `name: X` of a text, with where the spaces, comma, line break and quote before it begin."""

    def __init__(self, text: str) -> None:
        self.keys: list[tuple[int, re.Match[str]]] = []  # (earliest start of the tail, the name's match)
        for word in _NAME_WORD.finditer(text):
            key = _NAME_KEY.match(text, word.start())
            if key is not None:
                self.keys.append((_tail_start(text, word.start()), key))
        self.starts = [start for start, _ in self.keys]

    def first_after(self, position: int) -> tuple[int, re.Match[str]] | None:
        index = bisect.bisect_right(self.starts, position)
        return self.keys[index] if index < len(self.keys) else None


def _tail_start(text: str, word: int) -> int:
    """The earliest start of `[ \\t]*(?:,[ \\t]*)?(?:\\r?\\n[ \\t]*)?["']?` ending at `word`."""
    index = word
    if index > 0 and text[index - 1] in "\"'":
        index -= 1
    while index > 0 and text[index - 1] in " \t":
        index -= 1
    if index > 0 and text[index - 1] == "\n":
        index -= 1
        if index > 0 and text[index - 1] == "\r":
            index -= 1
        while index > 0 and text[index - 1] in " \t":
            index -= 1
    if index > 0 and text[index - 1] == ",":
        index -= 1
        while index > 0 and text[index - 1] in " \t":
            index -= 1
    return index


def value_then_name(text: str) -> Iterator[Entry]:
    """What `_VALUE_THEN_NAME.finditer(text)` finds.

    A bare value runs to where the first `name: X` after it begins (with its spaces, comma, line
    break and quote), if no newline, `#`, `,` or `}` comes first.
    """
    stops: _Positions | None = None
    keys: _NameKeys | None = None
    position = 0
    while (head := _VALUE_THEN_NAME_HEAD.search(text, position)) is not None:
        start = head.end()
        quoted = _QUOTED_THEN_NAME.match(text, start)
        if quoted is not None:
            yield Entry(quoted.group("name"), quoted.start("qv"), quoted.end("qv"))
            position = quoted.end()
            continue
        if _BARE_FIRST.match(text, start):
            stops = stops or _Positions(text, _VALUE_THEN_NAME_STOPS)
            keys = keys or _NameKeys(text)
            following = keys.first_after(start)
            if following is not None and following[0] <= stops.first_from(start + 1):
                tail_start, key = following
                yield Entry(key.group("name"), start, tail_start)
                position = key.end()
                continue
        position = head.start() + 1
