"""Shannon-entropy detection of long random-looking tokens that no known format names.

A candidate is a run of base64/base64url characters of 20 or more. It is a secret when it mixes
character classes, switches between them as often as random text does, and its entropy is close
to the maximum for its length. Left alone on purpose: UUIDs and hex strings (commit hashes,
digests, request ids), paths (judged segment by segment), dashed slugs (k8s pod names), words
joined in camelCase or snake_case, and subresource-integrity hashes (`sha512-...`).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator

from apps.redaction.spans import Span

MIN_LENGTH = 20
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{20,}={0,3}(?![A-Za-z0-9+/=_\-])")
_HEXISH = re.compile(r"^[0-9a-fA-F\-]+$")
_WORD = re.compile(r"^[a-z]{3,}$|^[A-Z][a-z]{2,}$")
_WORDISH = re.compile(r"[A-Z]?[a-z]{3,}")
_CONSONANTS = re.compile(r"[bcdfghjklmnpqrstvwxz]{5,}")
_DIGEST_PREFIX = re.compile(r"^(?:sha(?:1|224|256|384|512)|md5)[-:_]", re.IGNORECASE)
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|X509 CRL|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST"
    r"|PGP PUBLIC KEY BLOCK|PGP SIGNATURE)-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)"
)
_PUBLIC_PREFIX = re.compile(
    r"(?:\b(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com"
    r"|sk-ecdsa-sha2-nistp256@openssh\.com) |(?i:\b(?:sha(?:1|224|256|384|512)|md5))[:=])$"
)
_ULID = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
# Stripe-style object ids (ch_3Mml..., pi_..., job_...): a short lowercase prefix and a short body.
_OBJECT_ID = re.compile(r"^[a-z]{2,10}_[A-Za-z0-9]{6,32}$")
# A value labelled as an identifier ("request id: ...", "host id: ...", "trace_id=...").
_ID_LABEL = re.compile(
    r"(?i)\b(?:request|req|host|trace|span|correlation|job|run|event|message|msg|object|build|commit|tx|transaction"
    r"|x-amz-id-2|x-amz-request)[ _-]?(?:id|ids)?[\s\\\"']*[:=#]?[\s\\\"']*$"
)


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _class(ch: str) -> int:
    return 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else 3


def _pronounceable(word: str) -> bool:
    """Whether a run of letters reads like a word: vowels between consonants, no long consonant runs."""
    lowered = word.lower()
    vowels = sum(c in "aeiouy" for c in lowered)
    return vowels >= 0.25 * len(lowered) and not _CONSONANTS.search(lowered)


def looks_random(token: str, min_length: int = MIN_LENGTH) -> bool:
    """Whether `token` (no separators judged here) reads as a machine-made secret."""
    core = token.rstrip("=")
    n = len(core)
    if n < min_length or _HEXISH.match(core):
        return False
    lower = any(c.islower() for c in core)
    upper = any(c.isupper() for c in core)
    digits = sum(c.isdigit() for c in core)
    if lower + upper + (digits > 0) < 2:
        return False
    switches = sum(_class(a) != _class(b) for a, b in itertools.pairwise(core)) / (n - 1)
    if switches < 0.25:
        return False  # words in camelCase, ALLCAPS_WITH_DIGITS1, ...
    if sum(len(w) for w in _WORDISH.findall(core) if _pronounceable(w)) >= 0.6 * n:
        return False  # SignatureDoesNotMatch, getUserProfileById2
    alphabet = 26 * lower + 26 * upper + 10 * (digits > 0) + 2 * any(c in "+/-_" for c in core)
    threshold = 0.8 * math.log2(min(n, alphabet))
    if not digits:
        threshold += 0.3  # letters only: demand more before calling it random
    return shannon_entropy(core) >= threshold


def find_random_tokens(text: str) -> Iterator[Span]:
    public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----BEGIN" in text else []
    for m in _CANDIDATE.finditer(text):
        if any(start <= m.start() < end for start, end in public):
            continue  # certificates and public keys are meant to be seen
        token = m.group()
        if _DIGEST_PREFIX.match(token) or _OBJECT_ID.match(token):
            continue
        before = text[max(0, m.start() - 30) : m.start()]
        if (
            _ID_LABEL.search(before)
            or before.endswith("base64,")
            or _ULID.match(token)
            or _PUBLIC_PREFIX.search(before)
        ):
            continue  # labelled ids, data: URIs, ULIDs, SSH public keys and fingerprints
        yield from _judge(token, m.start())


def _judge(token: str, offset: int) -> Iterator[Span]:
    if "/" in token:
        parts = token.split("/")
        pathlike = token.startswith("/") or len(parts) > 4 or any(_WORD.match(p) for p in parts)
        if not pathlike and looks_random(token.replace("/", ""), min_length=MIN_LENGTH - 4):
            yield Span(offset, offset + len(token), "high_entropy")
            return
        position = offset
        for part in parts:
            if len(part) >= MIN_LENGTH - 4:  # a shorter part is never random (a path of 200k `/`: 200k parts)
                yield from _judge(part, position)
            position += len(part) + 1
        return
    segments = re.split(r"[-_]", token)
    if len(segments) > 2 and any(_WORD.match(s) for s in segments) and max(map(len, segments)) < 16:
        return  # a slug: my-deployment-5f7b9c8d6f-x2k4p, api_v2_users_list
    joined = token.replace("-", "").replace("_", "")
    if looks_random(joined, min_length=MIN_LENGTH - 4) if len(segments) > 1 else looks_random(token):
        yield Span(offset, offset + len(token), "high_entropy")


ENTROPY_FINDERS = (find_random_tokens,)
