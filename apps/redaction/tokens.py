"""Detectors for secrets with a recognisable shape: provider key prefixes, JWTs, PEM private keys.

Each detector is (type, compiled pattern); the whole match (or the group named `secret`, when the
pattern has one) is redacted. Minimum lengths are a little below the providers' real lengths so
truncated or hand-made examples are still caught: the prefixes alone are distinctive.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

Detector = tuple[str, re.Pattern[str]]

# Left/right boundaries for token bodies (a key never continues into more token characters).
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"


def _d(kind: str, pattern: str, flags: int = 0) -> Detector:
    return kind, re.compile(pattern, flags)


TOKEN_DETECTORS: tuple[Detector, ...] = (
    _d(
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=:,\-\s]|\\n|\\r)*)",
    ),
    _d("putty_private_key", r"PuTTY-User-Key-File-\d: [\s\S]*?Private-MAC: [0-9a-f]+"),
    _d("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    _d("jwt", _L + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*" + _R),
    _d(
        "aws_access_key",
        r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA|A3T[A-Z0-9])"
        r"[A-Z0-9]{12,20}(?![A-Z0-9])",
    ),
    _d(
        "aws_secret_key",
        r"(?i)aws.{0,30}?(?:secret|sk).{0,30}?[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    ),
    _d("gcp_api_key", _L + r"AIza[0-9A-Za-z_\-]{30,}" + _R),
    _d("gcp_oauth_token", _L + r"ya29\.[0-9A-Za-z_\-]{20,}" + _R),
    _d("gcp_oauth_secret", _L + r"GOCSPX-[0-9A-Za-z_\-]{20,}" + _R),
    _d("gcp_oauth_token", _L + r"1//0[0-9A-Za-z_\-]{30,}" + _R),
    _d("firebase_key", _L + r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{60,}" + _R),
    _d("amazon_mws_key", r"amzn\.mws\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    _d("azure_client_secret", _L + r"[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + _R),
    _d("github_token", _L + r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,255}" + _R),
    _d("github_token", _L + r"github_pat_[A-Za-z0-9_]{22,255}" + _R),
    _d("gitlab_token", _L + r"gl(?:pat|dt|ptt|rt|cbt|soat|ft|imt|oas|agent)-[A-Za-z0-9_\-]{16,}" + _R),
    _d("gitlab_token", _L + r"GR1348941[A-Za-z0-9_\-]{20,}" + _R),
    _d("slack_token", _L + r"xox[abposre]-(?:\d+-)?[A-Za-z0-9\-]{10,}" + _R),
    _d("slack_token", _L + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _R),
    _d("slack_webhook", r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
    _d(
        "discord_webhook",
        r"https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+",
    ),
    # Bot token: base64 user id, '.', 6-7 chars, '.', HMAC. An id part shorter than the usual 24-28
    # characters (hand-made or truncated examples) must hold a digit, so dotted names stay alone.
    _d(
        "discord_token",
        _L + r"[MNO](?:[A-Za-z\d_\-]{23,27}|(?=[A-Za-z_\-]{0,22}\d)[A-Za-z\d_\-]{17,22})"
        r"\.[A-Za-z\d_\-]{6,7}\.[A-Za-z\d_\-]{27,40}" + _R,
    ),
    _d("stripe_key", _L + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}" + _R),
    _d("stripe_webhook_secret", _L + r"whsec_[A-Za-z0-9+/=]{20,}"),
    _d("anthropic_key", _L + r"sk-ant-[A-Za-z0-9_\-]{20,}" + _R),
    _d("openai_key", _L + r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}" + _R),
    _d("huggingface_token", _L + r"(?:hf_|api_org_)[A-Za-z0-9]{20,}" + _R),
    _d("npm_token", _L + r"npm_[A-Za-z0-9]{20,}" + _R),
    _d("pypi_token", _L + r"pypi-[A-Za-z0-9_\-]{40,}" + _R),
    _d("sendgrid_key", _L + r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}" + _R),
    _d("twilio_key", r"(?<![A-Za-z0-9])(?:SK|AC)[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    # Client(account_sid, auth_token): the 32-hex auth token right after an account SID.
    _d("twilio_key", r"AC[0-9a-fA-F]{32}[\"']?\s*,\s*[\"']?(?P<secret>[0-9a-fA-F]{32})(?![A-Za-z0-9])"),
    _d("mailgun_key", _L + r"key-[0-9a-zA-Z]{32}" + _R),
    _d("mailchimp_key", r"(?<![A-Za-z0-9])[0-9a-f]{32}-us\d{1,2}(?![A-Za-z0-9])"),
    _d("shopify_token", _L + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _R),
    _d("digitalocean_token", _L + r"do[por]_v1_[a-f0-9]{64}" + _R),
    _d("databricks_token", _L + r"dapi[a-h0-9]{32}(?:-\d)?" + _R),
    _d("telegram_bot_token", r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_\-]{32,35}" + _R),
    _d("facebook_token", _L + r"EAA[A-Za-z0-9]{30,}" + _R),
    _d("square_token", _L + r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}" + _R),
    _d("square_token", _L + r"EAAA[A-Za-z0-9_\-]{56,}" + _R),
    _d("vault_token", _L + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}" + _R),
    _d("doppler_token", _L + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}" + _R),
    _d("postman_key", _L + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _R),
    _d("newrelic_key", _L + r"NR(?:AK|II|JS)-[A-Za-z0-9]{20,}" + _R),
    _d("linear_key", _L + r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}" + _R),
    _d("grafana_token", _L + r"(?:glc|glsa)_[A-Za-z0-9+/=_]{32,}" + _R),
    _d("pulumi_token", _L + r"pul-[a-f0-9]{40}" + _R),
    _d("supabase_token", _L + r"sbp_[a-f0-9]{40}" + _R),
    _d("atlassian_token", _L + r"ATATT3[A-Za-z0-9_=\-]{40,}" + _R),
    _d("mapbox_token", _L + r"[sp]k\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]{10,}" + _R),
    _d("replicate_token", _L + r"r8_[A-Za-z0-9]{30,}" + _R),
    _d("groq_key", _L + r"gsk_[A-Za-z0-9]{40,}" + _R),
    _d("xai_key", _L + r"xai-[A-Za-z0-9]{40,}" + _R),
    _d("perplexity_key", _L + r"pplx-[A-Za-z0-9]{40,}" + _R),
    _d("sentry_token", _L + r"sntry[su]_[A-Za-z0-9+/=_]{30,}" + _R),
    _d("heroku_key", _L + r"HRKU-[A-Za-z0-9_\-]{30,}" + _R),
    _d("dropbox_token", _L + r"sl\.[A-Za-z0-9_\-]{60,}" + _R),
    _d("airtable_token", _L + r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}" + _R),
    _d("notion_token", _L + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _R),
    _d("api_key", _L + r"[a-z]{2,10}_(?:live|prod)_[A-Za-z0-9]{16,}" + _R),
)

_PRIVATE_KEY_END = re.compile(r"-----END[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----")
_PRIVATE_KEY_BODY = re.compile(r"-----BEGIN[A-Z0-9 ]{0,30}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=:,\-\s]|\\n|\\r)*")
_PUTTY_MAC = re.compile(r"Private-MAC: [0-9a-f]+")
# Detectors whose lazy run looks for an end marker: from a start after the last marker that run
# scans to the end of the text and fails, once per start (quadratic). They are run up to the end
# of the last marker only, and after it as what they match when no marker follows (or not at all).
_UP_TO_LAST_MARKER: dict[str, tuple[re.Pattern[str], re.Pattern[str] | None]] = {
    TOKEN_DETECTORS[0][1].pattern: (_PRIVATE_KEY_END, _PRIVATE_KEY_BODY),
    TOKEN_DETECTORS[1][1].pattern: (_PUTTY_MAC, None),
}


_AWS_SECRET = TOKEN_DETECTORS[5][1]
_AWS = re.compile(r"(?i)aws")
_SEPARATOR = re.compile(r"[:=]")
_SPACES_QUOTE = re.compile(r"""\s*["']?""")
_BASE64_RUN = re.compile(r"(?i)[A-Za-z0-9/+=]+")  # (?i) as the detector: the long s (U+017F) folds to s
_AWS_REACH = 3 + 30 + 6 + 30  # `aws`, a gap, `secret`, a gap: where its separator can be


def _aws_secret_matches(text: str) -> Iterator[re.Match[str]]:
    """`_AWS_SECRET.finditer(text)`, tried only at an `aws` with a separator in reach that is followed
    by exactly 40 base64 characters. Tried everywhere, its two 30-character gaps are tried against
    each other at every `aws` (`awssk` repeated: 2 s for 200k characters)."""
    runs: list[tuple[int, int]] | None = None
    good: dict[int, bool] = {}  # separator position -> followed by exactly 40 base64 characters

    def followed_by_a_secret(separator: int) -> bool:
        nonlocal runs
        if separator not in good:
            runs = runs if runs is not None else [(m.start(), m.end()) for m in _BASE64_RUN.finditer(text)]
            start = _SPACES_QUOTE.match(text, separator + 1).end()  # type: ignore[union-attr]
            index = bisect.bisect_right(runs, (start, len(text) + 1)) - 1
            good[separator] = index >= 0 and runs[index][0] <= start and runs[index][1] - start == 40
        return good[separator]

    position = 0
    for aws in _AWS.finditer(text):
        if aws.start() < position:
            continue
        reach = _SEPARATOR.finditer(text, aws.end(), aws.start() + _AWS_REACH + 1)
        if not any(followed_by_a_secret(separator.start()) for separator in reach):
            continue
        match = _AWS_SECRET.match(text, aws.start())
        if match is not None:
            yield match
            position = match.end()


def token_matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`, in time linear in the text for the detectors with an end marker."""
    if pattern is _AWS_SECRET:
        yield from _aws_secret_matches(text)
        return
    split = _UP_TO_LAST_MARKER.get(pattern.pattern)
    if split is None:
        yield from pattern.finditer(text)
        return
    marker, after = split
    end = max((m.end() for m in marker.finditer(text)), default=0)
    yield from pattern.finditer(text, 0, end)
    if after is not None:
        yield from after.finditer(text, end)


# Every detector above but the PEM one needs a run of 12 or more of these characters: a prefix and a
# body of 10 or more token characters (`xapp-1-A-1-a`, the shortest, has 12), joined by `.`, `:`,
# `/`, `~`, `+` or `=` where a format has them (JWT parts, Telegram's `id:AA...`, Azure's `Q~`).
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.~:+/=]{12,}")


def could_hold_token(text: str) -> bool:
    """Whether any detector can match; False (most short queries) skips all of them, about 50 us.

    Keep it true to the detectors: a new one shorter than 12 run characters must be added here.
    """
    return "-----BEGIN" in text or _TOKEN_RUN.search(text) is not None
