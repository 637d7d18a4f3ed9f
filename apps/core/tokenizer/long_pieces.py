"""Exact encoding of text with very long pre-tokens, in O(n log n) instead of tiktoken's O(n²).

tiktoken splits text with its pattern into pre-tokens and merges each one's bytes by rank, scanning
the whole pre-token for the lowest-ranked pair at every merge: quadratic in the pre-token's length.
A run with no break for the pattern ('漢' * 30000: one letter run, 90,000 bytes) took 2-20 s
(issue 26 finding 9). Such runs are rare, so the normal path stays tiktoken's, and only a text that
has a run of `LONG_RUN` characters that the pattern might keep whole is split here with the same
pattern; a pre-token that long is merged with a heap (the same merges in the same order: the
lowest rank first, the leftmost on a tie, as tiktoken's `_byte_pair_merge`), the others by tiktoken.
The cost is then at most ~LONG_RUN² per run and O(n log n) per long pre-token.
"""

from __future__ import annotations

import functools
import heapq
import re

import regex
import tiktoken

LONG_RUN = 1_000  # characters; a pre-token this long costs tiktoken ~3-15 ms, quadratically more past it
# Unicode White_Space, what the patterns' \s means (Python's \s also takes \x1c-\x1f, which they don't).
_WS = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_HALF = LONG_RUN // 2 - 5
_STEP = _HALF // 2
# Every pre-token of the patterns is one optional leading character and then a run of non-space
# characters (letters and marks, or punctuation and symbols, plus a contraction), or a run of
# spaces, or a punctuation run then line breaks and '/'. So one of LONG_RUN characters holds a run
# of _HALF non-space characters, or of _HALF spaces and slashes; and such a run holds one of the
# windows [k * _STEP, (k + 1) * _STEP) whole. Testing those windows with str methods costs a few
# microseconds for a 4,000-character text (a regex over every position cost a third of the encode).
# A text with \x1c-\x1f (spaces to Python's str methods, not to the patterns) is tested by a regex.
# A flag is no verdict: a flagged text is encoded by `encode_long`, exactly, at about tiktoken's cost.
_ODD_SPACES = ("\x1c", "\x1d", "\x1e", "\x1f")
_MAYBE_LONG = re.compile(rf"(?<![^{_WS}])[^{_WS}]{{{_HALF},}}|(?<![{_WS}/])[{_WS}/]{{{_HALF},}}")


def has_long_run(text: str) -> bool:
    """Whether `text` may hold a pre-token of `LONG_RUN` characters or more (never a false "no")."""
    if len(text) < _HALF:
        return False
    if any(odd in text for odd in _ODD_SPACES):
        return _MAYBE_LONG.search(text) is not None
    for at in range(0, len(text) - _STEP + 1, _STEP):
        window = text[at : at + _STEP]
        if window.split(None, 1) == [window] or window.isspace():
            return True
        if "/" in window and window.replace("/", " ").isspace():
            return True
    return False


@functools.cache
def _pattern(pat_str: str) -> regex.Pattern[str]:
    return regex.compile(pat_str)


def merge_by_rank(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """tiktoken's byte-pair merge of one pre-token, with a heap: the lowest-ranked adjacent pair is
    merged first, the leftmost of equal ranks first; a heap entry whose pair has changed since it
    was pushed is skipped (its span no longer has that rank)."""
    whole = ranks.get(piece)
    if whole is not None:
        return [whole]
    n = len(piece)
    nxt = list(range(1, n + 1))
    prev = list(range(-1, n - 1))
    alive = [True] * n
    heap = [(rank, i) for i in range(n - 1) if (rank := ranks.get(piece[i : i + 2])) is not None]
    heapq.heapify(heap)
    pop, push, get = heapq.heappop, heapq.heappush, ranks.get
    while heap:
        rank, i = pop(heap)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n:
            continue
        k = nxt[j]
        if get(piece[i:k]) != rank:
            continue
        alive[j] = False
        nxt[i] = k
        if k < n:
            prev[k] = i
            after = get(piece[i : nxt[k]])
            if after is not None:
                push(heap, (after, i))
        p = prev[i]
        if p >= 0:
            before = get(piece[p:k])
            if before is not None:
                push(heap, (before, p))
    tokens = []
    i = 0
    while i < n:
        tokens.append(ranks[piece[i : nxt[i]]])
        i = nxt[i]
    return tokens


def encode_long(text: str, encoding: tiktoken.Encoding) -> list[int]:
    """`encoding.encode_ordinary(text)`, with the pattern's long pre-tokens merged by `merge_by_rank`."""
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    tokens: list[int] = []
    for piece in _pattern(encoding._pat_str).findall(text):
        if len(piece) >= LONG_RUN:
            tokens += merge_by_rank(piece.encode(), ranks)
        else:
            tokens += encoding._encode_single_piece(piece)
    return tokens
