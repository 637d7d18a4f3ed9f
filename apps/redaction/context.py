"""Secrets recognised by where they stand: `key=value` / JSON / YAML / XML pairs, HTTP headers,
credentials inside URLs, URL query parameters, command-line flags.

Only the value is redacted, so the message keeps its meaning (`password=[REDACTED:password]`).
A value that is a placeholder (`None`, `${TOKEN}`, `<token>`, `***`) or, after a bare `key: `, an
ordinary word of a sentence ("token: invalid") is not a secret and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from apps.redaction.spans import Span

# Key names ending in one of these hold secrets (DB_PASSWORD, "apiKey", aws_secret_access_key, ...).
_SECRET_WORDS = (
    r"password|passwd|passphrase|pwd|(?<![A-Za-z])pass|secret|token|api[_\- ]?key|apikey|access[_\-]?key"
    r"|private[_\-]?key|signing[_\-]?key|encryption[_\-]?key|master[_\-]?key|account[_\-]?key"
    r"|shared[_\-]?access[_\-]?key|license[_\-]?key|session[_\-]?(?:id|key)|sessionid|credentials?"
    r"|(?<![A-Za-z])auth|cookie|(?<![A-Za-z])sig|signature"
)
_KEY = rf"(?P<key>[A-Za-z0-9_.\-]{{0,40}}?(?:{_SECRET_WORDS}))"
_QUOTE = r"(?P<q>\\?[\"'`])"
_PAIR = re.compile(
    rf"""(?ix)
    (?<![A-Za-z0-9])["'`]?{_KEY}\\?["'`]?          # the key, maybe quoted
    (?P<sep>[ \t]*(?:=>|:=|=|:)[ \t]*)                     # its separator
    (?:{_QUOTE}(?P<qv>(?:(?!(?P=q)).){{1,500}}?)(?P=q)  # a quoted value
      |(?P<uv>[^\s"'`,;&<>(){{}}\[\]]+))             # or a bare one
    """
)
_XML = re.compile(rf"(?i)<(?P<tag>[A-Za-z0-9_.\-]{{0,40}}?(?:{_SECRET_WORDS}))>(?P<v>[^<\n]{{1,500}})</(?P=tag)>")
_PLACEHOLDER = re.compile(
    r"""(?ix)^(?:none|null|nil|undefined|true|false|empty|yes|no|n/?a|tbd|todo|redacted|hidden|masked|secret
    |password|token|\*+|x{3,}|\.{2,}|…|-+|_+|\?+|<[^>]*>|\[[^\]]*\]|\{[^}]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?
    |%[sd]|%\(\w+\)s|\{\{.*\}\}|process\.env\.\w+|os\.environ.*|env\(.*)$"""
)
# Words that follow a bare `key: ` in ordinary error messages.
_STOPWORDS = frozenset(
    """invalid missing required expired revoked empty wrong incorrect unknown unset undefined denied
    rejected refused failed error not must should cannot can is are was were has have the a an
    too short long weak strong malformed bad mismatch mismatched none null nil true false ok
    expected unexpected provided given set present absent found valid verified ignored disabled enabled
    blank changed updated deleted created string str int integer number bool boolean object array list
    dict map type value field optional mandatory via for with from and or on in of to by at""".split()
)
# Words after `authorization: <scheme>` in sentences about the header, not credentials.
_SCHEME_PROSE = _STOPWORDS | {"scheme", "auth", "authentication", "header", "headers", "credentials", "realm", "token"}
_PATH_VALUE = re.compile(r"^(?:~|\.{1,2}|[A-Za-z]:)?[/\\][\w.\-/\\ ]*$")


def _secret_value(key: str, sep: str, value: str, quoted: bool, text: str, end: int) -> bool:
    value = value.strip()
    if len(value) < 3 or _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
        return False
    lowered = key.lower()
    if _PATH_VALUE.match(value) and ("key" in lowered or "pwd" in lowered or "cookie" in lowered):
        return False  # a path to a key file (ssl_private_key=/etc/ssl/key.pem), the shell's $PWD
    if value.isdigit() and len(value) < 8 and not any(w in lowered for w in ("pass", "pwd", "pin")):
        return False  # counts and sizes: token=0, session_id=12
    if lowered.endswith(("sig", "signature")) and not quoted and "=" not in sep and len(value) < 16:
        return False
    if not quoted and text[end : end + 1] in ("(", "["):
        return False  # code, not a value: api_key = os.getenv("OPENAI_API_KEY")
    if "public" in lowered:
        return False  # public keys and .NET's PublicKeyToken are meant to be seen
    if not quoted and ":" in sep and "=" not in sep:
        # `key: value` is also how sentences are built ("token: invalid format", "Unexpected token: punc").
        if value.lower().strip(".!") in _STOPWORDS:
            return False
        rest = text[end : end + 40]
        if value.isalpha() and value.islower() and re.match(r" [a-z]+\b", rest):
            return False
        passwordish = any(w in lowered for w in ("pass", "pwd"))
        if not passwordish and (len(value) < 6 or (value.isalpha() and len(value) < 20)):
            return False  # "auth : Authentication failed": a word, not a token
    return True


# A substring of every alternative of _SECRET_WORDS: a key can only end in a secret word that holds one.
_SECRET_WORD_CORES = ("pass", "pwd", "secret", "token", "key", "session", "credential", "auth", "cookie", "sig")


def could_hold_pair(text: str) -> bool:
    """Whether `_PAIR` can match at all; False lets most queries skip its costly scan (20-40 us).

    A pair needs a separator (`=` or `:`) and a secret word. The words are checked on the lowered
    text only when it is ASCII: there `(?i)` folds exactly as `lower()` does, while some non-ASCII
    letters (long s U+017F, the Kelvin sign) fold onto ASCII ones under `(?i)` but not under `lower()`.
    """
    if "=" not in text and ":" not in text:
        return False
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_WORD_CORES)


def find_pairs(text: str) -> Iterator[Span]:
    if could_hold_pair(text):
        yield from _find_pair_matches(text)
    if "</" in text:  # every _XML match closes its tag
        yield from _find_xml_pairs(text)


def _find_pair_matches(text: str) -> Iterator[Span]:
    for m in _PAIR.finditer(text):
        quoted = m.group("qv") is not None
        group = "qv" if quoted else "uv"
        value = m.group(group)
        if _secret_value(m.group("key"), m.group("sep"), value, quoted, text, m.end(group)):
            yield Span(m.start(group), m.end(group), _kind(m.group("key")))


def _find_xml_pairs(text: str) -> Iterator[Span]:
    for m in _XML.finditer(text):
        if _secret_value(m.group("tag"), "=", m.group("v"), True, text, m.end("v")):
            yield Span(m.start("v"), m.end("v"), _kind(m.group("tag")))


def _kind(key: str) -> str:
    lowered = key.lower()
    if any(w in lowered for w in ("pass", "pwd")):
        return "password"
    if "cookie" in lowered or "session" in lowered:
        return "session"
    if "private" in lowered:
        return "private_key"
    if "token" in lowered or "auth" in lowered:
        return "token"
    if "key" in lowered:
        return "api_key"
    return "secret"


_AUTH = re.compile(
    r"""(?ix)(?:\b|(?<=http_))(?:proxy[-_])?authori[sz]ation\\?["']?[ \t]*[:=][ \t]*\\?["']?
    (?:(?P<scheme>bearer|basic|token|digest|negotiate|ntlm|apikey|api-key|sso-key|hmac|aws4-hmac-sha256|otp)[ \t]+)?
    (?P<v>[^\s"'\\,;]+)"""
)
# Any other scheme (`Authorization: SharedKey acct:sig`, `Authorization: Custom a1b2...`): the
# credential after it, when it is not a word (`Authorization: failed for user bob`).
_AUTH_ANY_SCHEME = re.compile(
    r"""(?ix)(?:\b|(?<=http_))(?:proxy[-_])?authori[sz]ation\\?["']?[ \t]*[:=][ \t]*\\?["']?
    (?P<scheme>[A-Za-z][A-Za-z0-9._\-]{1,30})[ \t]+(?P<v>[^\s"'\\,;]{6,})"""
)
_BEARER = re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/=\-]{16,})")
_HEADER = re.compile(
    r"""(?imx)(?<![A-Za-z0-9\-])(?P<name>x-[a-z0-9\-]{0,40}?(?:api-?key|token|secret|auth|signature|password|session|key)
    |api-?key|private-token|ocp-apim-subscription-key|x-amz-security-token|x-csrf-token
    |(?:set-)?cookie)\\?["']?\s*:\s*\\?["']?(?P<v>[^\n"'\\]+)"""
)


def find_headers(text: str) -> Iterator[Span]:
    # _AUTH, _AUTH_ANY_SCHEME and _HEADER all need a `:` or `=` after the name: most queries have none.
    separated = ":" in text or "=" in text
    for m in _AUTH.finditer(text) if separated else ():
        value = m.group("v")
        scheme = (m.group("scheme") or "").lower()
        if not scheme and (len(value) < 8 or _PLACEHOLDER.match(value) or value.lower() in _STOPWORDS):
            continue
        if not scheme and value.isalpha() and re.match(r"[ \t]+[^\s\"']{6,}", text[m.end("v") :]):
            continue  # an unlisted scheme (`SharedKey acct:sig`): _AUTH_ANY_SCHEME redacts its credential
        if _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
            continue
        if scheme and value.lower() in _SCHEME_PROSE:
            continue  # prose: "the authorization: basic scheme is deprecated"
        end = m.end("v")
        if scheme in ("digest", "aws4-hmac-sha256", "hmac"):
            end = _line_end(text, m.start("v"))
        yield Span(m.start("v"), end, "authorization")
    for m in _AUTH_ANY_SCHEME.finditer(text) if separated else ():
        value = m.group("v")
        if m.group("scheme").lower() in _STOPWORDS or _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
            continue
        if any(c.isdigit() for c in value) or any(c in "=+/:_-." for c in value):
            yield Span(m.start("v"), m.end("v"), "authorization")
    for m in _BEARER.finditer(text):
        value = m.group("v")
        if any(c.isdigit() for c in value) or not value.isalpha():
            yield Span(m.start("v"), m.end("v"), "authorization")
    for m in _HEADER.finditer(text) if ":" in text else ():
        name = m.group("name").lower()
        start = m.start("v")
        end = m.end("v") if name.endswith("cookie") else start + len(re.split(r"[\s,;]", m.group("v"), maxsplit=1)[0])
        value = text[start:end].strip()
        if len(value) >= 3 and not _PLACEHOLDER.match(value) and value.lower() not in _STOPWORDS:
            yield Span(start, start + len(text[start:end].rstrip()), "session" if "cookie" in name else "api_key")


def _line_end(text: str, start: int) -> int:
    newline = text.find("\n", start)
    end = len(text) if newline < 0 else newline
    while end > start and text[end - 1] in "\"' \r":
        end -= 1
    return end


_URL_PASSWORD = re.compile(
    r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s:/@\"'<>]*):(?P<v>[^\s\"'<>/?#]+)@(?=[A-Za-z0-9\[\-_])"
)
_URL_TOKEN_USER = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<v>[A-Za-z0-9_\-.]{16,})@[A-Za-z0-9\-]")
_QUERY = re.compile(
    r"""(?ix)[?&;](?P<k>(?:[a-z0-9_\-]{0,40}[_\-])?(?:token|key|secret|password|passwd|pwd|pass|sig|signature|apikey|code
    |session|sessionid|sid|credential|auth)|x-amz-[a-z\-]+|x-goog-[a-z\-]+)=(?P<v>[^&\s#"'<>]+)"""
)


def find_urls(text: str) -> Iterator[Span]:
    # Each pattern is skipped when a literal it needs is absent (most queries hold no URL).
    for m in _URL_PASSWORD.finditer(text) if "://" in text else ():
        value = m.group("v")
        if value and not _PLACEHOLDER.match(value) and not value.startswith("[REDACTED"):
            yield Span(m.start("v"), m.end("v"), "url_credentials")
    for m in _URL_TOKEN_USER.finditer(text) if "://" in text else ():
        value = m.group("v")
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            yield Span(m.start("v"), m.end("v"), "url_credentials")
    for m in _QUERY.finditer(text) if "=" in text else ():
        key, value = m.group("k").lower(), m.group("v")
        if key.startswith(("x-amz-", "x-goog-")) and not key.endswith(("signature", "credential", "token")):
            continue
        if len(value) >= 4 and not _PLACEHOLDER.match(value) and not value.startswith("[REDACTED"):
            yield Span(m.start("v"), m.end("v"), "password" if "pass" in key or "pwd" in key else "token")


_FLAG = re.compile(
    r"""(?ix)(?<![\w-])--?(?P<key>password|passwd|pass|pwd|token|api-key|apikey|secret|client-secret|access-token
    |auth-token|private-key|key-password|db-password|admin-password|storepass|keypass|passphrase)(?:=|\s+)
    (?:(?P<q>["'])(?P<qv>[^"'\n]+)(?P=q)|(?P<uv>[^\s"']+))"""
)
_MYSQL = re.compile(
    r"""\bmysql(?:dump|admin|import|sh)?\b[^\n]*?(?<!\S)-p(?P<v>[^\s'"\-][^\s'"]{2,}|'[^']+'|"[^"]+")"""
)
_CURL_USER = re.compile(r"""(?<![\w-])(?:-u|--user|--proxy-user)[ =]?(?P<q>["']?)[^\s:"']+:(?P<v>[^\s"']+)(?P=q)""")
_REDIS_CLI = re.compile(r"""\bredis-cli\b[^\n]*?(?<!\S)(?:-a|--pass)\s+(?P<q>["']?)(?P<v>[^\s"']+)(?P=q)""")
_ORACLE = re.compile(
    r"(?:jdbc:oracle:\w+:@?|\b(?:sqlplus|sqlldr|expdp|impdp)\s+(?:-\w+\s+)*)[\w.$#]+/(?P<v>[^\s/@\"']+)@"
)
_NETRC = re.compile(r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<v>\S+)")
_SSHPASS = re.compile(r"""\bsshpass\b[^\n]*?(?<!\S)-p\s*(?P<v>'[^']+'|"[^"]+"|[^\s'"]+)""")


def find_flags(text: str) -> Iterator[Span]:
    # Each pattern below needs a `-` (a flag, `redis-cli`), `machine` (netrc) or `/` and `@` (Oracle).
    if "-" not in text and "machine" not in text and ("/" not in text or "@" not in text):
        return
    for m in _FLAG.finditer(text):
        quoted = m.group("qv") is not None
        group = "qv" if quoted else "uv"
        if not quoted and m.group(group).lower() in _STOPWORDS:
            continue  # prose: "Using --password via the CLI is insecure"
        if _secret_value(m.group("key"), "=", m.group(group), quoted, text, m.end(group)):
            yield Span(m.start(group), m.end(group), _kind(m.group("key")))
    for pattern in (_MYSQL, _SSHPASS, _CURL_USER, _NETRC, _REDIS_CLI, _ORACLE):
        for m in pattern.finditer(text):
            yield Span(m.start("v"), m.end("v"), "password")


_SPOKEN = re.compile(
    r"""(?i)\b(?:password|passphrase|passwd)\s+(?:is\s+|was\s+|of\s+)?(?P<q>["'`])(?P<v>[^"'`\n]{3,100})(?P=q)"""
)


_SPOKEN_BARE = re.compile(
    r"(?i)\b(?P<key>password|passphrase|passwd|api[ _\-]?key|access[ _\-]?key|secret(?:[ _\-]?key)?"
    r"|(?:auth |access |api )?token)\s+(?:is|was|to|as)\s+(?P<q>[\"'`]?)(?P<v>[^\s\"'`,;()]{3,100})(?P=q)"
)


def find_spoken(text: str) -> Iterator[Span]:
    """`password "hunter2" is too weak`, `my password is hunter2`: a value right after the word password.

    Unquoted, it must look like a password (a digit or a symbol in it), not a word ("is required").
    """
    quoted = '"' in text or "'" in text or "`" in text  # _SPOKEN needs its value quoted
    for m in _SPOKEN.finditer(text) if quoted else ():
        if not _PLACEHOLDER.match(m.group("v")):
            yield Span(m.start("v"), m.end("v"), "password")
    for m in _SPOKEN_BARE.finditer(text):
        value = m.group("v").rstrip(".!?")
        if value.lower() in _STOPWORDS or _PLACEHOLDER.match(value) or (value.isalpha() and not m.group("q")):
            continue
        yield Span(m.start("v"), m.start("v") + len(value), _kind(m.group("key")))


CONTEXT_FINDERS = (find_headers, find_urls, find_flags, find_pairs, find_spoken)
