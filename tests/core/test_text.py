"""The one sentence cutter (apps/core/text.py): lossless split, longest fitting prefix, word clip."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.core.text import ELLIPSIS, clip_words, cut_to_fit, longest_prefix, sentences
from apps.core.tokenizer import count_tokens

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=400)


def test_longest_prefix_takes_whole_parts_within_bounds() -> None:
    parts = ["One.", "Two.", "Three."]
    assert longest_prefix(parts, lambda t: len(t) <= 8, sep=" ") == "One."
    assert longest_prefix(parts, lambda t: len(t) <= 9, sep=" ") == "One. Two."
    assert longest_prefix(parts, lambda t: True, sep=" ") == "One. Two. Three."
    assert longest_prefix(parts, lambda t: True, most=2) == "One.Two."
    assert longest_prefix(parts, lambda t: False) is None
    assert longest_prefix([], lambda t: True) is None


def test_clip_words_adds_an_ellipsis_and_trims() -> None:
    assert clip_words("alpha beta, gamma delta", lambda t: len(t) <= 12, trim=",") == "alpha beta" + ELLIPSIS
    assert clip_words("alpha beta gamma", lambda t: True) == "alpha beta" + ELLIPSIS  # never all the words
    assert clip_words("alpha beta gamma delta", lambda t: True, least=5) is None
    assert clip_words("alpha", lambda t: True) is None


@settings(max_examples=200, deadline=None)
@given(text=words, allowance=st.integers(min_value=0, max_value=80))
def test_a_cut_is_a_whole_sentence_prefix_that_fits(text: str, allowance: int) -> None:
    def fits(t: str) -> bool:
        return count_tokens(t, "o200k_base") <= allowance

    parts = sentences(text)
    assert re.sub(r"\s", "", "".join(parts)) == re.sub(r"\s", "", text)  # only blank parts are dropped
    assert all(p.strip() for p in parts)
    cut = cut_to_fit(text, fits)
    if cut is None:
        return
    assert fits(cut)
    assert text.strip().startswith(cut)
    assert any("".join(parts[:k]).strip() == cut for k in range(1, len(parts)))
