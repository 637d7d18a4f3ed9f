"""Exact token counts from the genuine vocabularies, with the right encoding per model."""

from __future__ import annotations

import pytest

from apps.core import tokenizer
from apps.core.tokenizer import count_tokens, decode, encode, encoding_for_model


@pytest.mark.parametrize(
    ("model", "encoding", "estimated"),
    [
        ("gpt-4o", "o200k_base", False),
        ("gpt-4o-mini", "o200k_base", False),
        ("gpt-4.1", "o200k_base", False),
        ("o3-mini", "o200k_base", False),
        ("gpt-5", "o200k_base", False),
        ("gpt-4", "cl100k_base", False),
        ("gpt-4-turbo", "cl100k_base", False),
        ("gpt-3.5-turbo", "cl100k_base", False),
        ("claude-3-opus", "cl100k_base", True),
        ("llama-3", "cl100k_base", True),
    ],
)
def test_it_picks_the_encoding_of_the_model(model: str, encoding: str, estimated: bool) -> None:
    info = encoding_for_model(model)
    assert (info.encoding, info.estimated) == (encoding, estimated)


def test_it_counts_exactly_like_tiktoken() -> None:
    # Reference values published for these encodings.
    assert encode("hello world", "cl100k_base") == [15339, 1917]
    assert count_tokens("tiktoken is great!", "cl100k_base") == 6
    assert count_tokens("hello world", "o200k_base") == 2


def test_it_treats_special_token_text_as_ordinary_text() -> None:
    text = "before <|endoftext|> after"
    tokens = encode(text, "o200k_base")
    assert decode(tokens, "o200k_base") == text and 199999 not in tokens


def test_preload_loads_every_encoding_once_so_no_request_pays_for_it() -> None:
    tokenizer.get_encoding.cache_clear()
    tokenizer.preload()
    assert tokenizer.get_encoding.cache_info().currsize == len(tokenizer.ENCODINGS)
    misses = tokenizer.get_encoding.cache_info().misses
    assert tokenizer.count_tokens("hello world", "o200k_base") == 2
    assert tokenizer.get_encoding.cache_info().misses == misses
