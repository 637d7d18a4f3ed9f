"""The last-resort summary when the LLM failed and nothing is cached: raw content cut at a sentence."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from apps.core.text import clip_words, longest_prefix
from apps.core.tokenizer import count_tokens, encoding_for_model
from apps.summaries.extractive import split_sentences


def truncate_at_sentence(texts: Sequence[str], max_tokens: int, *, model: str | None = None) -> str:
    """The leading whole sentences of `texts` within `max_tokens` (exact count).

    When even the first sentence is too long, its leading words with an ellipsis.
    """
    encoding = encoding_for_model(model or settings.DEFAULT_MODEL).encoding

    def fits(text: str) -> bool:
        return count_tokens(text, encoding) <= max_tokens

    sentences = [s for text in texts for s in split_sentences(text)]
    if not sentences:
        return ""
    return longest_prefix(sentences, fits, sep=" ") or clip_words(sentences[0], fits) or ""
