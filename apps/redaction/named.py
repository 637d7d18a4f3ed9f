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

import math
import re
from collections import Counter
from collections.abc import Iterator

from apps.redaction.context import _PLACEHOLDER, _STOPWORDS, _kind
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


def looks_random(value: str, *, minimum: int = 12) -> bool:
    """A secret-looking value: long enough, no spaces, 3 character classes (or 2 with 24+ chars),
    high entropy; never a placeholder, identifier, path, URL, template or pattern."""
    if len(value) < minimum or _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
        return False
    if _NOT_A_SECRET_VALUE.search(value) or _IDENTIFIER.match(value) or _UUID.match(value):
        return False
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )
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
_ENV_LINE = re.compile(r"(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=")


def find_named_assignments(text: str) -> Iterator[Span]:
    """A random-looking value assigned to a name with a secret part (quoted anywhere; bare on
    `.env` lines and after `=`)."""
    if ":" not in text and "=" not in text:
        return  # no assignment operator, nothing to find
    for m in _ASSIGN.finditer(text):
        name = m.group("name")
        holds = secret_name(name)
        if holds is None:
            continue
        quoted = m.group("qv") is not None
        value = m.group("qv") if quoted else m.group("uv")
        if not quoted and not _ENV_LINE.match(text, _line_start(text, m.start())):
            continue  # bare values only on KEY=value lines: elsewhere a pair is a sentence or code
        if looks_random(value):
            group = "qv" if quoted else "uv"
            yield Span(m.start(group), m.end(group), "password" if holds == "password" else _kind(name))


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


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


def find_name_value_entries(text: str) -> Iterator[Span]:
    """`- name: DB_PASSWORD` then `value: ...` (also `{"name": ..., "value": ...}`, either order)."""
    if ":" not in text and "=" not in text:
        return  # both patterns need `name:`/`value=`
    for pattern, n in ((_NAME_THEN_VALUE, 1), (_VALUE_THEN_NAME, 2)):
        for m in pattern.finditer(text):
            holds = secret_name(m.group("name"))
            if holds is None:
                continue
            group = f"qv{n}" if m.group(f"qv{n}") is not None else f"uv{n}"
            value = m.group(group).strip()
            ok = (
                _password_value(value)
                if holds == "password"
                else looks_random(value, minimum=8)
                or (_password_value(value) and any(p in ("secret", "token") for p in name_parts(m.group("name"))))
            )
            if ok:
                start = m.start(group)
                kind = "password" if holds == "password" else _kind(m.group("name"))
                yield Span(start, start + len(m.group(group).rstrip()), kind)


_QUOTED_OR_BARE = r"""(?P<v>'[^'\n]+'|"[^"\n]+"|[^\s'"]+)"""
_LOGIN_P = re.compile(r"""(?i)\blog-?in\b[^\n]*?(?<!\S)(?:-p|--pass)(?:[ \t]+|=)""" + _QUOTED_OR_BARE)
_SQL_P = re.compile(
    r"""(?i)\b(?:sqlcmd|bcp|osql|isql|mongo(?:sh|dump|restore|export|import)?)\b[^\n]*?(?<!\S)-[pP][ \t]*"""
    + _QUOTED_OR_BARE
)
_HTPASSWD = re.compile(
    r"""\bhtpasswd\b[^\n]*?(?<!\S)-[a-zA-Z]*b[a-zA-Z]*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+""" + _QUOTED_OR_BARE
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
