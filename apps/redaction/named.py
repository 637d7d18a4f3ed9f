"""Secrets recognised by the NAME they are stored under, wherever that name stands.

Three classes that the pair finder (context.py) cannot see, because the name is not directly
followed by its value or does not end in a secret word:
- `SECRET_KEY = '<punctuation-heavy random>'`, `SECRET_KEY_BASE=...`, `JWT_SIGNING_KEY: "..."`: a
  name with a secret part (`secret`, `key`, `password`, `token`, ...) anywhere in it, and a value
  that looks random (mixed character classes, high entropy, no spaces); a quoted value in any
  assignment, a bare one on an `.env`-style line;
- `- name: DB_PASSWORD` / `value: ...` (Kubernetes env, on separate lines) and
  `{"name": "API_TOKEN", "value": "..."}` (ECS, Terraform, JSON): the value next to a secret name;
- `docker login -p <pw>` and the like: a short password flag of a login or database client.

Names that say they hold something else (`*_ID`, `*_FILE`, `*_TTL`, `*_PREFIX`, ...) are left alone,
and so are placeholders and values that look like identifiers, paths, URLs or patterns.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from apps.redaction.context import _PLACEHOLDER, _STOPWORDS, _kind, _rest_of_line
from apps.redaction.entries import name_then_value, value_then_name
from apps.redaction.spans import Span

_PASSWORDISH = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pin"})
_SECRETISH = _PASSWORDISH | frozenset(
    {"secret", "secrets", "key", "apikey", "secretkey", "token", "credential", "credentials", "salt", "pepper"}
)
# A name whose last part is one of these holds metadata about a secret, not the secret.
_METADATA = frozenset(
    """id ids arn name names file path paths dir url uri length len size bits ttl prefix suffix header field
    type kind algorithm alg algo version count max min limit limits budget expiry expires expiration timeout
    store env var ref hint policy mode format pattern regex template location provider backend source id_
    enabled disabled required rotation hash hashed index column table label sha fingerprint usage""".split()
)
# `key` in these names is a database or cache key, not a secret one.
_PLAIN_KEYS = frozenset(
    """idempotency partition sort cache primary foreign routing lookup dedup dedupe shard object bucket row
    hash map dict group unique natural composite order ordering index redis memcache s3 storage sequence
    composite cursor pagination page join api_version hotkey keyboard""".split()
)
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_parts(name: str) -> list[str]:
    """`DJANGO_SECRET_KEY` → [django, secret, key]; `apiKeyValue` → [api, key, value]."""
    return [part.lower() for chunk in re.split(r"[_.\-\s]+", name) for part in _PARTS.findall(chunk)]


def secret_name(name: str) -> str | None:
    """ "password" or "secret" when the name says it holds one, else None."""
    parts = name_parts(name)
    if not parts or parts[-1] in _METADATA or "public" in parts:
        return None
    if any(part in _PASSWORDISH for part in parts):
        return "password"
    secretish = {part for part in parts if part in _SECRETISH}
    if secretish == {"key"} and any(part in _PLAIN_KEYS for part in parts):
        return None
    return "secret" if secretish else None


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_NOT_A_SECRET_VALUE = re.compile(r"[\[\]\\{}<>]|://|^[~./]|^[A-Za-z]:\\|%\(|%[sd]|^arn:|^\$|\s")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
_IDENTIFIER = re.compile(r"^(?:[a-z]+(?:[_.\-][a-z]+)*|[A-Z]+(?:_[A-Z]+)*|[A-Za-z]+(?:\.[A-Za-z]+)+)$")


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGITS = frozenset("0123456789")
_ALNUM = _LOWER | _UPPER | _DIGITS


def _classes(value: str) -> int:
    """How many of lowercase, uppercase, digits and other characters `value` holds (sets for ASCII)."""
    if value.isascii():
        seen = set(value)
        return bool(seen & _LOWER) + bool(seen & _UPPER) + bool(seen & _DIGITS) + bool(seen - _ALNUM)
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def looks_random(value: str, *, minimum: int = 12) -> bool:
    """A secret-looking value: long enough, no spaces, 3 character classes (or 2 with 24+ chars),
    high entropy; never a placeholder, identifier, path, URL, template or pattern."""
    if len(value) < minimum or _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
        return False
    if _NOT_A_SECRET_VALUE.search(value) or _IDENTIFIER.match(value) or _UUID.match(value):
        return False
    classes = _classes(value)
    if classes < 2 or (classes == 2 and len(value) < 24):
        return False
    return _entropy(value) >= 3.3


def _password_value(value: str) -> bool:
    """A value under a password name: anything but a placeholder, a stopword or a bare number < 4 digits."""
    value = value.strip()
    if len(value) < 3 or _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
        return False
    if value.lower() in _STOPWORDS or _NOT_A_SECRET_VALUE.search(value):
        return False
    return True


_ASSIGN = re.compile(
    r"""(?x)(?<![A-Za-z0-9_.\-])["'`]?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{1,60})["'`]?
    [ \t]*(?:=>|:=|=|:)[ \t]*
    (?:(?P<q>["'`])(?P<qv>[^\n]{6,500}?)(?P=q)(?=[\s,;)}\]]|$)|(?P<uv>[^\s"'`,;]{12,500}))"""
)
# _ASSIGN up to its value's opening quote (or its bare value). The quoted value's end is found by
# `_QuoteEnds`: `[^\n]{6,500}?(?P=q)(?=...)` from every opening quote scans up to 500 characters, and
# `"value": "` repeated has one every 10 (12 s for 200k characters).
_ASSIGN_HEAD = re.compile(
    r"""(?x)(?<![A-Za-z0-9_.\-])["'`]?(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{1,60})["'`]?
    [ \t]*(?:=>|:=|=|:)[ \t]*
    (?:(?P<q>["'`])|(?P<uv>[^\s"'`,;]{12,500}))"""
)
_CLOSING_QUOTE = re.compile(r"""["'`](?=[\s,;)}\]]|$)""")
_ENV_LINE = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=")


class _QuoteEnds:
    """Where a quoted value opened at some position ends, as `(?P<qv>[^\n]{6,500}?)(?P=q)(?=[\\s,;)}\\]]|$)`
    says: at the first same quote 6 to 500 characters on that is followed by a delimiter, with no
    newline before it. The closing quotes and newlines are listed once per text, then bisected."""

    def __init__(self, text: str) -> None:
        self.closing: dict[str, list[int]] = {'"': [], "'": [], "`": []}
        for m in _CLOSING_QUOTE.finditer(text):
            self.closing[m.group()].append(m.start())
        self.newlines = [i for i, c in enumerate(text) if c == "\n"] if "\n" in text else []

    def end(self, quote: str, start: int) -> int | None:
        """The closing quote's position for a value starting at `start`, or None."""
        closings = self.closing[quote]
        index = bisect.bisect_left(closings, start + 6)
        if index == len(closings) or closings[index] > start + 500:
            return None
        newline = bisect.bisect_left(self.newlines, start)
        if newline < len(self.newlines) and self.newlines[newline] < closings[index]:
            return None
        return closings[index]


@dataclass(frozen=True)
class _Assignment:
    name: str
    value_start: int
    value_end: int
    quoted: bool


def _assignments(text: str) -> Iterator[_Assignment]:
    """What `_ASSIGN.finditer(text)` finds, in time linear in the text."""
    ends: _QuoteEnds | None = None
    position = 0
    while (m := _ASSIGN_HEAD.search(text, position)) is not None:
        if m.group("uv") is not None:
            yield _Assignment(m.group("name"), m.start("uv"), m.end("uv"), quoted=False)
            position = m.end()
            continue
        ends = ends or _QuoteEnds(text)
        end = ends.end(m.group("q"), m.end())
        if end is None:
            position = m.start() + 1  # _ASSIGN fails here: it goes on from the next character
            continue
        yield _Assignment(m.group("name"), m.end(), end, quoted=True)
        position = end + 1


def find_named_assignments(text: str) -> Iterator[Span]:
    """A random-looking value assigned to a name with a secret part (quoted anywhere; bare on
    `.env` lines and after `=`)."""
    if ":" not in text and "=" not in text:
        return  # no assignment operator, nothing to find
    env_lines: dict[int, bool] = {}  # line start -> whether it is a KEY=value line
    line_start = scanned = 0
    for assignment in _assignments(text):
        holds = secret_name(assignment.name)
        if holds is None:
            continue
        start = assignment.value_start
        if not assignment.quoted:
            newline = text.rfind("\n", scanned, start)  # positions only grow: each character looked at once
            line_start, scanned = (newline + 1 if newline >= 0 else line_start), start
            if line_start not in env_lines:
                env_lines[line_start] = _ENV_LINE.match(text, line_start) is not None
            if not env_lines[line_start]:
                continue  # bare values only on KEY=value lines: elsewhere a pair is a sentence or code
        if looks_random(text[start : assignment.value_end]):
            kind = "password" if holds == "password" else _kind(assignment.name)
            yield Span(start, assignment.value_end, kind)


def find_name_value_entries(text: str) -> Iterator[Span]:
    """`- name: DB_PASSWORD` then `value: ...` (also `{"name": ..., "value": ...}`, either order)."""
    if ":" not in text and "=" not in text:
        return  # both patterns need `name:`/`value=`
    for scan in (name_then_value, value_then_name):
        for entry in scan(text):
            holds = secret_name(entry.name)
            if holds is None:
                continue
            raw = text[entry.value_start : entry.value_end]
            value = raw.strip()
            ok = (
                _password_value(value)
                if holds == "password"
                else looks_random(value, minimum=8)
                or (_password_value(value) and any(p in ("secret", "token") for p in name_parts(entry.name)))
            )
            if ok:
                kind = "password" if holds == "password" else _kind(entry.name)
                yield Span(entry.value_start, entry.value_start + len(raw.rstrip()), kind)


_QUOTED_OR_BARE = r"""(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"]+)"""
_LOGIN_WORD = r"\blog-?in\b"
_SQL_WORD = r"\b(?:sqlcmd|bcp|osql|isql|mongo(?:sh|dump|restore|export|import)?)\b"
_HTPASSWD_WORD = r"\bhtpasswd\b"
_LOGIN_P = re.compile(
    rf"""(?i){_LOGIN_WORD}{_rest_of_line(_LOGIN_WORD)}(?<!\S)(?:-p|--pass)(?:[ \t]+|=)""" + _QUOTED_OR_BARE
)
_SQL_P = re.compile(rf"""(?i){_SQL_WORD}{_rest_of_line(_SQL_WORD)}(?<!\S)-[pP][ \t]*""" + _QUOTED_OR_BARE)
# The flags' letters and the flags between `-b` and the file are bounded: unbounded, `-bbbb...` and
# `-x -x -x ...` backtrack in the square of their length.
_HTPASSWD = re.compile(
    rf"""{_HTPASSWD_WORD}{_rest_of_line(_HTPASSWD_WORD)}(?<!\S)-[a-zA-Z]{{0,20}}b[a-zA-Z]{{0,20}}"""
    r"""(?:[ \t]+-\w{1,40}){0,8}[ \t]+\S+[ \t]+\S+[ \t]+""" + _QUOTED_OR_BARE
)


def find_login_flags(text: str) -> Iterator[Span]:
    """`docker login -u me -p <pw>`, `sqlcmd -P <pw>`, `mongosh -p <pw>`, `htpasswd -b file user <pw>`."""
    if "-" not in text:
        return  # every pattern needs its flag's dash
    for pattern in (_LOGIN_P, _SQL_P, _HTPASSWD):
        for m in pattern.finditer(text):
            value = m.group("v").strip("'\"")
            if value.isdigit() or value.startswith("-") or _PLACEHOLDER.match(value) or len(value) < 3:
                continue  # a port, the next flag, `-p $PASSWORD`
            if value.isalpha() and value.islower() and m.group("v")[0] not in "'\"":
                continue  # prose: "the -p flag is deprecated"
            yield Span(m.start("v"), m.end("v"), "password")


NAMED_FINDERS = (find_named_assignments, find_name_value_entries, find_login_flags)
