"""Personal data: emails, phone numbers, payment card numbers (Luhn), IBANs (mod 97), US SSNs.

Each shape is checked beyond the regex where a checksum exists, so order ids and timestamps are
not taken for card numbers; `git@github.com` remotes and `handler@main.js:3:7` stack frames are
not taken for emails.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from apps.redaction.spans import Span

_EMAIL = re.compile(
    r"(?<![\w.%+\-@])(?P<local>[A-Za-z0-9._%+\-]{1,64})@"
    r"(?P<domain>[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.(?P<tld>[A-Za-z]{2,24}))(?![\w\-@])"
)
_FILE_SUFFIXES = frozenset(
    """js mjs cjs ts tsx jsx py pyc rb go rs java kt kts scala json yaml yml md txt log sh bash php css scss
    html htm vue svelte lock toml cfg ini xml sql swift c h cc cpp hpp cs map so dll exe jar class zip gz tar
    png jpg jpeg svg gif pdf csv proto tf hcl env conf pem crt key""".split()
)
_NOT_PEOPLE = frozenset({"git"})


def find_emails(text: str) -> Iterator[Span]:
    if "@" not in text:
        return
    for m in _EMAIL.finditer(text):
        if m.group("tld").lower() in _FILE_SUFFIXES or m.group("local").lower() in _NOT_PEOPLE:
            continue
        yield Span(m.start(), m.end(), "email")


_PHONE_INTL = re.compile(r"(?<![\w+/=.:\-])\+(?:\d[ .\-]?|\(\d{1,4}\)[ .\-]?){7,14}\d(?![\w.\-]?\d)")
_PHONE_US = re.compile(r"(?<![\w.\-+])(?:\(\d{3}\)[ .\-]?|\d{3}[.\-])\d{3}[.\-]\d{4}(?![\w.\-]?\d)")
_PHONE_KEYED = re.compile(
    r"(?i)\b(?:phone|mobile|cell|tel|telephone|fax|whatsapp)(?:[_\- ]?(?:number|no|num))?"
    r"\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>\+?[\d(][\d ().\-]{5,20}\d)"
)


def find_phones(text: str) -> Iterator[Span]:
    # Skipped when a literal they need is absent: `+` (international), `-` or `.` (US), `:` or `=` (keyed).
    shapes: tuple[re.Pattern[str], ...] = (_PHONE_INTL,) if "+" in text else ()
    if "-" in text or "." in text:
        shapes += (_PHONE_US,)
    for pattern in shapes:
        for m in pattern.finditer(text):
            digits = sum(c.isdigit() for c in m.group())
            if 8 <= digits <= 15 or pattern is _PHONE_US:
                yield Span(m.start(), m.end(), "phone")
    for m in _PHONE_KEYED.finditer(text) if ":" in text or "=" in text else ():
        if 7 <= sum(c.isdigit() for c in m.group("v")) <= 15:
            yield Span(m.start("v"), m.end("v"), "phone")


_CARD = re.compile(r"(?<![\d\-.])\d(?:[ \-]?\d){12,18}(?![\d\-]|\.\d)")
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6(?:011|5|4[4-9]|22)|35|62|8[1-9]|50|5[6-9]|6[37])")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def find_cards(text: str) -> Iterator[Span]:
    for m in _CARD.finditer(text):
        raw = m.group()
        digits = re.sub(r"\D", "", raw)
        if not 13 <= len(digits) <= 19 or not _CARD_PREFIX.match(digits) or not luhn_valid(digits):
            continue
        if (" " in raw or "-" in raw) and len(set(re.findall(r"[ \-]", raw))) > 1:
            continue  # mixed separators: a list of numbers, not one card
        yield Span(m.start(), m.end(), "credit_card")


_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")


def iban_valid(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in moved)
    return int(number) % 97 == 1


def find_ibans(text: str) -> Iterator[Span]:
    for m in _IBAN.finditer(text):
        if iban_valid(m.group()):
            yield Span(m.start(), m.end(), "iban")


_SSN = re.compile(r"(?<![\d\-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d\-])")


def find_ssns(text: str) -> Iterator[Span]:
    if "-" not in text:
        return
    for m in _SSN.finditer(text):
        yield Span(m.start(), m.end(), "ssn")


PII_FINDERS = (find_cards, find_ibans, find_ssns, find_emails, find_phones)
