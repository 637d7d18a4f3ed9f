"""The offline extractive summarizer: the most central, non-redundant sentences, filling a token target.

Centrality is the cosine between a sentence's tf-idf vector and the centroid of all sentences
(the centroid method: linear in the input, so a large layer stays cheap). Sentences are taken
greedily by centrality, skipping near-duplicates of those already chosen and those that do not
fit, then put back in source order. When whole sentences leave room, the best sentence that
did not fit is clipped at a word boundary to fill it. Every candidate summary is counted
exactly with the model's tokenizer, so the result never exceeds `max_tokens`.

Pure and deterministic (ties broken by position); no model, no network, no database.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from apps.core.text import clip_words
from apps.core.tokenizer import count_tokens, encoding_for_model

_LINE_SPLIT = re.compile(r"\n+")
_SENTENCE_SPLIT = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=\S)")
_MARKER = re.compile(r"^\s*(?:[#>*\u2022\-\u2013]+|\d+[.)])\s+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_TERMINAL = (".", "!", "?", ":", ";", "…", '"', "'", ")")
_ANAPHORA = re.compile(r"(?:she|he|it|they|this|that|these|those|its|their|his|her)\b", re.IGNORECASE)
ANAPHORA_DAMPING = 0.5
QUESTION_DAMPING = 0.7
REDUNDANT_SIMILARITY = 0.8
TITLE_SUPPORT_FLOOR = 0.5  # a title's information counts at least this much though no other text echoes it
MIN_FILL_TOKENS = 4  # less room than this is not worth a clipped sentence
MAX_CANDIDATES = 4000  # sentences tried per summary; beyond it the tail is never central enough

_STOPWORDS = frozenset(
    """a an and are as at be been but by for from has have he her his i if in into is it its
    of on or our she so that the their them then there these they this to was we were what
    when which who will with you your not no do does did can could would should may might
    than too very just also about over after before up out all any some such only own same""".split()
)


@dataclass(frozen=True)
class _Sentence:
    position: int
    source: int  # index of the text it came from
    text: str
    weights: dict[str, float]
    norm: float


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: lines, then sentence-ending punctuation; list markers dropped."""
    out: list[str] = []
    for line in _LINE_SPLIT.split(text):
        line = _MARKER.sub("", line).strip()
        if not line:
            continue
        for part in _SENTENCE_SPLIT.split(line):
            part = " ".join(part.split())
            if part:
                out.append(part if part.endswith(_TERMINAL) else part + ".")
    return out


def _terms(sentence: str) -> list[str]:
    words = (w.lower() for w in _WORD.findall(sentence))
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words if len(w) > 1 and w not in _STOPWORDS]


def _vectorize(raw: list[tuple[int, str]]) -> list[_Sentence]:
    """tf-idf vectors per unique (source, sentence); exact repeats (case-insensitive) are kept once."""
    seen: set[str] = set()
    kept: list[tuple[int, str, list[str]]] = []
    for source, sentence in raw:
        key = sentence.lower()
        if key in seen:
            continue
        seen.add(key)
        kept.append((source, sentence, _terms(sentence)))
    df: Counter[str] = Counter()
    for _, _, terms in kept:
        df.update(set(terms))
    n = len(kept)
    out = []
    for position, (source, sentence, terms) in enumerate(kept):
        weights = {t: c * math.log(1 + n / df[t]) for t, c in Counter(terms).items()}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        out.append(_Sentence(position, source, sentence, weights, norm))
    return out


def _cosine(a: _Sentence, b: _Sentence) -> float:
    if not a.norm or not b.norm:
        return 0.0
    small, large = (a.weights, b.weights) if len(a.weights) <= len(b.weights) else (b.weights, a.weights)
    return sum(w * large.get(t, 0.0) for t, w in small.items()) / (a.norm * b.norm)


def _centrality(sentences: list[_Sentence], focus: Sequence[str] = ()) -> list[float]:
    """Cosine to the centroid of the texts, damped for fragments of a few words.

    Every text weighs the same in the centroid, however many sentences it has, so one long
    text (or a child layer's summary) cannot drown a layer's own short items. `focus` texts (a
    reader's recent concerns) pull the centroid toward their terms, weighted as much as the
    whole source, so sentences about them win when they are otherwise close.
    """
    per_text: dict[int, defaultdict[str, float]] = {}
    for s in sentences:
        if s.norm:
            vector = per_text.setdefault(s.source, defaultdict(float))
            for t, w in s.weights.items():
                vector[t] += w / s.norm
    centroid: defaultdict[str, float] = defaultdict(float)
    for vector in per_text.values():
        v_norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        for t, w in vector.items():
            centroid[t] += w / v_norm
    focus_terms = Counter(t for text in focus for t in _terms(text))
    if focus_terms and centroid:
        f_norm = math.sqrt(sum(c * c for c in focus_terms.values()))
        mass = math.sqrt(sum(w * w for w in centroid.values()))
        for t, c in focus_terms.items():
            if t in centroid:  # terms absent from the source cannot select anything
                centroid[t] += mass * c / f_norm
    c_norm = math.sqrt(sum(w * w for w in centroid.values())) or 1.0
    scores = []
    for s in sentences:
        if not s.norm:
            scores.append(0.0)
            continue
        cos = sum(w * centroid.get(t, 0.0) for t, w in s.weights.items()) / (s.norm * c_norm)
        scores.append(cos * _damping(s))
    return scores


def _clip(base: list[_Sentence], extra: _Sentence, room_check: _Fits) -> str | None:
    """`extra` cut at the longest word prefix (plus an ellipsis) that still fits after `base`."""
    texts = [s.text for s in base]
    return clip_words(extra.text, lambda clipped: room_check([*texts, clipped]), least=3, trim=",;:-\u2013")


class _Fits:
    """Exact check that the joined sentences fit; counts are memoised per joined string."""

    def __init__(self, encoding: str, max_tokens: int) -> None:
        self.encoding, self.max_tokens = encoding, max_tokens

    def __call__(self, texts: Sequence[str]) -> bool:
        return count_tokens(" ".join(texts), self.encoding) <= self.max_tokens


@dataclass
class Ranked:
    """The source's unique sentences ranked by centrality, ready for any number of token targets."""

    sentences: list[_Sentence]
    order: list[int]  # sentence indexes, most central first (ties: earlier first)
    encoding: str
    lengths: dict[int, int]  # exact token counts, filled lazily and shared across targets
    scores: list[float]  # centrality of each sentence

    def length(self, i: int) -> int:
        if i not in self.lengths:
            self.lengths[i] = count_tokens(self.sentences[i].text, self.encoding)
        return self.lengths[i]


def rank(texts: Sequence[str], *, model: str | None = None, focus: Sequence[str] = ()) -> Ranked | None:
    """Split, deduplicate and rank the sentences of `texts`; None when there is no text."""
    encoding = encoding_for_model(model or settings.DEFAULT_MODEL).encoding
    raw = [(index, s) for index, text in enumerate(texts) if text and text.strip() for s in split_sentences(text)]
    if not raw:
        return None
    sentences = _vectorize(raw)
    scores = _centrality(sentences, focus)
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))[:MAX_CANDIDATES]
    return Ranked(sentences=sentences, order=order, encoding=encoding, lengths={}, scores=scores)


def select(ranked: Ranked, max_tokens: int) -> str:
    """The summary of a ranked source within `max_tokens` (see extractive_summary).

    Sentences are chosen on the sum of their own counts (joining with a space almost never
    changes it), then the joined text is counted exactly and the least central ones dropped
    until it fits, so the guarantee rests on the exact count, not on the estimate.
    """
    if max_tokens <= 0:
        return ""
    encoding, sentences = ranked.encoding, ranked.sentences
    chosen: list[int] = []
    used = 0
    best_unfit: int | None = None
    for i in ranked.order:
        if max_tokens - used < 3:
            break
        fits = used + ranked.length(i) <= max_tokens
        if not fits and best_unfit is not None:
            continue  # cheap test first: the redundancy test costs more
        if any(_cosine(sentences[i], sentences[c]) >= REDUNDANT_SIMILARITY for c in chosen):
            continue
        if not fits:
            best_unfit = i
            continue
        chosen.append(i)
        used += ranked.length(i)

    def joined(ids: list[int]) -> str:
        return " ".join(sentences[i].text for i in sorted(ids))

    result = joined(chosen)
    while chosen and count_tokens(result, encoding) > max_tokens:
        chosen.pop()  # the least central goes first
        result = joined(chosen)
    room = max_tokens - (count_tokens(result, encoding) if result else 0)
    if best_unfit is not None and room >= MIN_FILL_TOKENS:
        base = [sentences[i] for i in sorted(chosen)]
        clipped = _clip(base, sentences[best_unfit], _Fits(encoding, max_tokens))
        if clipped is not None:
            result = f"{result} {clipped}" if result else clipped
    if not result:
        # Not even a clipped sentence fits (tiny target): the leading tokens of the best sentence.
        result = _leading_tokens(sentences[ranked.order[0]].text, max_tokens, encoding)
    return result


def extractive_summary(
    texts: Sequence[str], max_tokens: int, *, model: str | None = None, focus: Sequence[str] = ()
) -> str:
    """The most central, non-redundant sentences of `texts`, in source order, within `max_tokens`.

    Fills the target as fully as whole sentences allow, then clips one more sentence into the
    remaining room. Exact token count in `model`'s tokenizer (default: settings.DEFAULT_MODEL);
    never more than `max_tokens`. Returns "" when there is no text or no room. `focus` biases
    centrality toward those texts' terms (personalized summaries).
    """
    if max_tokens <= 0:
        return ""
    ranked = rank(texts, model=model, focus=focus)
    return select(ranked, max_tokens) if ranked else ""


def _leading_tokens(text: str, max_tokens: int, encoding: str) -> str:
    from apps.core.tokenizer import decode, encode

    tokens = encode(text, encoding)[:max_tokens]
    while tokens:
        out = decode(tokens, encoding).strip()
        if out and count_tokens(out, encoding) <= max_tokens:
            return out
        tokens = tokens[:-1]
    return ""


def _damping(sentence: _Sentence) -> float:
    """Fragments say little, a question asks rather than tells, and a sentence opening on a pronoun
    leans on one the reader will not see."""
    damp = min(1.0, len(sentence.weights) / 6) * (ANAPHORA_DAMPING if _ANAPHORA.match(sentence.text) else 1.0)
    return damp * (QUESTION_DAMPING if sentence.text.endswith("?") else 1.0)


def _support(sentences: list[_Sentence]) -> list[float]:
    """How much of the other texts each sentence says: its cosine with the centroid of every text but its
    own, damped as centrality is. A text of one short sentence (a greeting, "Thanks, see you!") is its
    own text's whole vector, so plain centrality ranks it high in a small group; the others' terms do not."""
    per_text: dict[int, defaultdict[str, float]] = {}
    for s in sentences:
        if s.norm:
            vector = per_text.setdefault(s.source, defaultdict(float))
            for t, w in s.weights.items():
                vector[t] += w / s.norm
    unit: dict[int, dict[str, float]] = {}
    centroid: defaultdict[str, float] = defaultdict(float)
    for source, vector in per_text.items():
        v_norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
        unit[source] = {t: w / v_norm for t, w in vector.items()}
        for t, w in unit[source].items():
            centroid[t] += w
    scores = []
    for s in sentences:
        if not s.norm:
            scores.append(0.0)
            continue
        own = unit[s.source]
        others = {t: w - own.get(t, 0.0) for t, w in centroid.items()}
        o_norm = math.sqrt(sum(w * w for w in others.values() if w > 1e-12))
        cos = sum(w * others.get(t, 0.0) for t, w in s.weights.items()) / (s.norm * o_norm) if o_norm > 1e-9 else 0.0
        scores.append(max(cos, 0.0) * _damping(s))
    return scores


def extractive_title(texts: Sequence[str], max_tokens: int, *, model: str | None = None) -> str:
    """One sentence of `texts` naming what they are about, clipped to `max_tokens` (exact count).

    The sentence with the most information (the summed tf-idf of its terms: many words, rare ones
    weighing most), weighed by how much of the other texts it says (`_support`): in a chat the chatter
    ("Hey Sam!", "Thanks, see you!") repeats the same few words, so it supports itself but says little.
    A title is one informative sentence cut short, never the few short sentences that happen to fit
    the target whole, which is what `extractive_summary` at a title's size picks when the central
    sentences are long. "" when there is no text.
    """
    ranked = rank(texts, model=model)
    if ranked is None or max_tokens <= 0:
        return ""
    sentences = ranked.sentences
    support = _support(sentences)
    information = [sum(s.weights.values()) * _damping(s) for s in sentences]
    richest = max(information) or 1.0
    # Support as the cosine itself, not relative to the best: in a small group of chat turns the best
    # may be a word or two shared by chance ("good", a name), too little to outweigh information.
    score = [(information[i] / richest) * (TITLE_SUPPORT_FLOOR + support[i]) for i in range(len(sentences))]
    best = max(ranked.order, key=lambda i: (score[i], -i))  # ties: the earlier
    text = sentences[best].text
    if count_tokens(text, ranked.encoding) <= max_tokens:
        return text
    fits = _Fits(ranked.encoding, max_tokens)
    return clip_words(text, lambda t: fits([t]), least=1, trim=",;:-\u2013") or _leading_tokens(
        text, max_tokens, ranked.encoding
    )
