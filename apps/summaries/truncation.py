"""The last-resort summary when the LLM failed and nothing is cached: raw content cut at a sentence."""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from apps.core.tokenizer import count_tokens, encoding_for_model
from apps.summaries.extractive import split_sentences


def truncate_at_sentence(texts: Sequence[str], max_tokens: int, *, model: str | None = None) -> str:
    """The leading whole sentences of `texts` within `max_tokens` (exact count).

    When even the first sentence is too long, its leading words with an ellipsis.
    """
    encoding = encoding_for_model(model or settings.DEFAULT_MODEL).encoding
    sentences = [s for text in texts for s in split_sentences(text)]
    out: list[str] = []
    for sentence in sentences:
        if count_tokens(" ".join([*out, sentence]), encoding) > max_tokens:
            break
        out.append(sentence)
    if out or not sentences:
        return " ".join(out)
    words = sentences[0].split()
    lo, hi, best = 1, len(words) - 1, ""
    while lo <= hi:  # longest word prefix that fits, in O(log n) counts
        mid = (lo + hi) // 2
        clipped = " ".join(words[:mid]) + "…"
        if count_tokens(clipped, encoding) <= max_tokens:
            best, lo = clipped, mid + 1
        else:
            hi = mid - 1
    return best
