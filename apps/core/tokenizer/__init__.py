"""The one door to the tokenizers: exact counts in each model's own vocabulary, or an estimate.

`vocabularies.py` loads the genuine files (hash-checked, never downloaded), `counting.py` counts
text (cached by segments, bounded in time by `long_pieces.py`), `catalogue.py` says which model
uses what, `chat.py` counts chat messages and tools, `estimates.py` scales an estimated model's
count by its family's calibrated ratio.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.core.tokenizer.catalogue import UNKNOWN, ModelSpec, catalogue_models, model_spec
from apps.core.tokenizer.counting import (
    COUNT_CACHE_MAX_CHARS,
    COUNT_CACHE_SIZE,
    SEGMENT_CACHE_MAX_CHARS,
    _count_by_segments,
    count_tokens,
    decode,
    encode,
    preload,
    segments,
)
from apps.core.tokenizer.vocabularies import ENCODINGS, VocabularyMismatch, get_encoding

__all__ = [
    "COUNT_CACHE_MAX_CHARS",
    "COUNT_CACHE_SIZE",
    "ENCODINGS",
    "SEGMENT_CACHE_MAX_CHARS",
    "UNKNOWN",
    "ModelSpec",
    "TokenizerInfo",
    "VocabularyMismatch",
    "_count_by_segments",
    "catalogue_models",
    "count_tokens",
    "decode",
    "encode",
    "encoding_for_model",
    "get_encoding",
    "model_spec",
    "preload",
    "segments",
]


@dataclass(frozen=True)
class TokenizerInfo:
    """Which encoding counts a model's tokens, whether the count is only an estimate, and the
    catalogue entry (`known` is False for a model the catalogue does not know)."""

    model: str
    encoding: str
    estimated: bool
    spec: ModelSpec = UNKNOWN
    known: bool = True


def encoding_for_model(model: str) -> TokenizerInfo:
    """The catalogue's tokenizer for `model`; an unknown model is counted with cl100k_base, estimated."""
    spec = model_spec(model)
    if spec is None:
        return TokenizerInfo(model=model, encoding=UNKNOWN.encoding, estimated=True, spec=UNKNOWN, known=False)
    return TokenizerInfo(model=model, encoding=spec.encoding, estimated=not spec.exact, spec=spec)
