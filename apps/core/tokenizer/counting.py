"""Exact token counts of text in an encoding, cached by segments, bounded in time on any input."""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata

from apps.core.tokenizer.long_pieces import encode_long, has_long_run
from apps.core.tokenizer.vocabularies import ENCODINGS, NFC_ENCODINGS, get_encoding

# Counts of recent strings: assembly counts the same rendered items again and again across requests.
COUNT_CACHE_SIZE = 65_536
# A whole text up to this length is kept with its count (a chunk, counted again by later requests);
# a longer one (a whole context, never asked twice) is counted by its segments, which are kept.
COUNT_CACHE_MAX_CHARS = 4_000
SEGMENT_CACHE_MAX_CHARS = 20_000  # longer segments are counted each time, so the cache stays small
_WORD_THEN_SPACE = re.compile("[A-Za-z] ")


def _is_ascii_letter(char: str) -> bool:
    return "a" <= char <= "z" or "A" <= char <= "Z"


def segments(text: str) -> list[str]:
    """`text` cut where every encoding here always ends a pre-token: before a space that follows an
    ASCII letter, at the first and the last such place of every line.

    Each encoding first splits text with a regex and encodes each match on its own, so a count is
    the sum of the counts of pieces cut at match boundaries. No alternative of any of the patterns
    (cl100k_base and llama3 share one; o200k_base, tekken and qwen2 differ in digits, letter cases,
    marks and contractions) matches a letter followed by a space: letter runs stop at the space, the
    optional leading character and the punctuation runs exclude letters, whitespace runs exclude
    them; and none looks behind, so such a place is a boundary in any text around it. Qwen's NFC
    normalization composes nothing across it (a space is a starter that composes with no preceding
    character). `tests/core/test_tokenizer.py` checks the cut counts against each encoding.
    The cuts of a line depend only on the line, so a rendered chunk is cut the same inside a
    context as alone: the long middle of each chunk is counted once and then served from the
    cache, and only the few words around each join are new.
    """
    cuts: list[int] = []
    search, rfind = _WORD_THEN_SPACE.search, text.rfind
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        first = search(text, start, end) if line else None
        if first is not None:
            at = first.start() + 1
            cuts.append(at)
            last = rfind(" ", at + 1, end)
            while last > at and not _is_ascii_letter(text[last - 1]):
                last = rfind(" ", at + 1, last)
            if last > at:
                cuts.append(last)
        start = end + 1
    if not cuts:
        return [text]
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def encode(text: str, encoding: str) -> list[int]:
    """The tokens of `text`; special-token strings in it are ordinary text. Bounded: see long_pieces."""
    enc = get_encoding(encoding)
    if encoding in NFC_ENCODINGS and not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    if has_long_run(text):
        return encode_long(text, enc)
    return enc.encode_ordinary(text)


def decode(tokens: list[int], encoding: str) -> str:
    return get_encoding(encoding).decode(tokens)


def _encoded_length(text: str, encoding: str) -> int:
    return len(encode(text, encoding))


@functools.lru_cache(maxsize=COUNT_CACHE_SIZE)
def _count_segment(text: str, encoding: str) -> int:
    return _encoded_length(text, encoding)


def _count_by_segments(text: str, encoding: str) -> int:
    parts = segments(text)
    if len(parts) == 1:
        return _encoded_length(text, encoding)
    return sum(
        _encoded_length(part, encoding) if len(part) > SEGMENT_CACHE_MAX_CHARS else _count_segment(part, encoding)
        for part in parts
    )


@functools.lru_cache(maxsize=COUNT_CACHE_SIZE)
def _count(text: str, encoding: str) -> int:
    return _count_by_segments(text, encoding)


def count_tokens(text: str, encoding: str) -> int:
    """Exact token count; special-token strings in user content count as ordinary text."""
    if len(text) > COUNT_CACHE_MAX_CHARS:
        return _count_by_segments(text, encoding)
    return _count(text, encoding)


def preload(names: tuple[str, ...] = ENCODINGS) -> None:
    """Load encodings now (~0.3-1 s each), so a server's first request does not pay for it."""
    for name in names:
        get_encoding(name).encode_ordinary("warm")
