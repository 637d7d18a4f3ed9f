"""Text a summary would repeat: the sentences of a layer or community summary already in the context.

The default summaries are extractive (their sentences are the items' own), so a layer summary packed
beside the turns it was cut from repeats them verbatim. The packer drops from a summary's rungs the
sentences the context already holds (compared without case and surrounding space) and leaves a
summary out ("duplicate_text") when nothing of it is new.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.core.text import sentences
from apps.engine.types import Rung

# Sources whose text is built from other items' sentences (a layer summary, a community's).
DERIVED_SOURCES = frozenset({"summary", "community"})


def sentence_keys(text: str) -> set[str]:
    """The text's sentences as comparison keys."""
    return {" ".join(part.split()).lower() for part in sentences(text)}


def without_seen(rungs: Iterable[Rung], seen: set[str]) -> list[Rung]:
    """Each rung without the sentences in `seen`; rungs left empty are dropped."""
    out = []
    for rung in rungs:
        kept = [part for part in sentences(rung.text) if " ".join(part.split()).lower() not in seen]
        text = "".join(kept).strip()
        if text:
            out.append(Rung(rung.depth, text if len(kept) < len(sentences(rung.text)) else rung.text, prefix=False))
    return out
