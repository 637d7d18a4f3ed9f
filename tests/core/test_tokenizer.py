"""Exact token counts from the genuine vocabularies, with the right encoding per model."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
        ("claude-3-opus", "o200k_base", True),
        ("gemini-2.5-pro", "o200k_base", True),
        ("llama-3", "llama3", False),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama3", False),
        ("llama3.2:3b", "llama3", False),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2", False),
        ("qwen3-8b", "qwen2", False),
        ("mistralai/Mistral-Nemo-Instruct-2407", "tekken", False),
        ("pixtral-12b-2409", "tekken", False),
        ("mistral-small-2501", "tekken", True),
        ("gpt-oss-120b", "o200k_harmony", False),
        ("gpt-5.1", "o200k_base", False),
    ],
)
def test_it_picks_the_encoding_of_the_model(model: str, encoding: str, estimated: bool) -> None:
    info = encoding_for_model(model)
    assert (info.encoding, info.estimated) == (encoding, estimated)


@pytest.mark.parametrize("model", ["qwen3.5-27b", "llama-4-scout", "my-own-model", ""])
def test_an_unknown_model_is_counted_with_cl100k_base_and_flagged(model: str) -> None:
    info = encoding_for_model(model)
    assert (info.encoding, info.estimated, info.known) == ("cl100k_base", True, False)


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
    assert tokenizer.get_encoding("o200k_harmony") is tokenizer.get_encoding("o200k_base")
    misses = tokenizer.get_encoding.cache_info().misses
    assert tokenizer.count_tokens("hello world", "o200k_base") == 2
    assert tokenizer.get_encoding.cache_info().misses == misses


def _reference_encode(text: str, encoding: str) -> list[int]:
    """tiktoken's own encode of the whole text (Qwen's input in NFC, as its tokenizer.json normalizes)."""
    if encoding == "qwen2":
        text = unicodedata.normalize("NFC", text)
    return tokenizer.get_encoding(encoding).encode(text, disallowed_special=())


# Characters around the places `segments` cuts: ASCII and other letters, marks, apostrophes of
# contractions, digits, every kind of space and line break, punctuation and '/' (o200k_base
# joins it to line breaks), astral characters.
TRICKY = st.lists(
    st.sampled_from(
        [
            *"aZq  \n\r\t'/.,:#-_{}\"0189",
            "'s",
            "'ll",
            "\u00a0",
            "\u0301",
            "é",
            "ß",
            "ǅ",
            "日",
            "😀",
            "\u2028",
            "\u3000",
            "e\u0301 ",
            "A\u030a",
            "\u1100\u1161",
        ]
    ),
    max_size=120,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=TRICKY, encoding=st.sampled_from(tokenizer.ENCODINGS))
def test_a_count_by_segments_is_the_exact_count(text: str, encoding: str) -> None:
    exact = len(_reference_encode(text, encoding))
    assert "".join(tokenizer.segments(text)) == text
    assert tokenizer._count_by_segments(text, encoding) == exact
    assert count_tokens(text, encoding) == exact


@settings(max_examples=50, deadline=None)
@given(parts=st.lists(TRICKY, min_size=20, max_size=40), encoding=st.sampled_from(tokenizer.ENCODINGS))
def test_a_long_text_is_counted_exactly(parts: list[str], encoding: str) -> None:
    text = "\n\n".join(f"### Part {i} of the text\n{part}" for i, part in enumerate(parts)) * 12
    assert len(text) > tokenizer.COUNT_CACHE_MAX_CHARS
    assert count_tokens(text, encoding) == len(_reference_encode(text, encoding))


def test_a_chunk_is_cut_the_same_alone_and_inside_a_context() -> None:
    chunk = "### Billing · item/fact · Project\nBilling fails when the queue is full. Raised by Priya in standup."
    context = f"# Context\n\n{chunk}\n\n### Search · item/fact · Project\nSearch was rewritten in Go."
    inner = tokenizer.segments(chunk)[1:-1]  # what is not next to a join
    assert inner and "".join(inner) in "".join(tokenizer.segments(context))
    assert all(part in tokenizer.segments(context) for part in inner)
