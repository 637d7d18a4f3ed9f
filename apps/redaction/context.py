"""Secrets recognised by where they stand: `key=value` / JSON / YAML / XML pairs, HTTP headers,
credentials inside URLs, URL query parameters, command-line flags.

Only the value is redacted, so the message keeps its meaning (`password=[REDACTED:password]`).
A value that is a placeholder (`None`, `${TOKEN}`, `<token>`, `***`) or, after a bare `key: `, an
ordinary word of a sentence ("token: invalid") is not a secret and is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

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


# `_PAIR.finditer` tries up to 40 prefix lengths times every secret word at every position of the
# text (77 us a character: 15 s for 200k characters of `.`). Every pair has a separator right after
# its key, so the scan below starts from the separators, reads the secret word that ends before
# each, and tries the rest of `_PAIR` only where its key can start: what it finds is what
# `_PAIR.finditer` finds (tests/redaction/test_linear_time.py holds the two together).
_SEPARATOR = re.compile(r"[=:]")
_WORD_ENDING = re.compile(rf"(?i)(?:{_SECRET_WORDS})\Z")
_AFTER_KEY = re.compile(
    rf"""(?i)\\?["'`]?(?P<sep>[ \t]*(?:=>|:=|=|:)[ \t]*)"""
    rf"""(?:{_QUOTE}(?P<qv>(?:(?!(?P=q)).){{1,500}}?)(?P=q)|(?P<uv>[^\s"'`,;&<>(){{}}\[\]]+))"""
)
_KEY_CHARACTER = re.compile(r"(?i)[A-Za-z0-9_.\-]")
_ALPHANUMERIC = re.compile(r"(?i)[A-Za-z0-9]")
_ASCII_ALPHANUMERIC = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_ASCII_KEY_CHARACTERS = _ASCII_ALPHANUMERIC | frozenset("_.-")


def _is_key_character(text: str, index: int) -> bool:
    """`_KEY_CHARACTER` at `index`: a set lookup for ASCII, the regex (and its case folding) otherwise."""
    character = text[index]
    if character.isascii():
        return character in _ASCII_KEY_CHARACTERS
    return _KEY_CHARACTER.match(character) is not None


def _is_alphanumeric(text: str, index: int) -> bool:
    character = text[index]
    if character.isascii():
        return character in _ASCII_ALPHANUMERIC
    return _ALPHANUMERIC.match(character) is not None


_LONGEST_WORD = 20  # shared_access_key, the longest secret word, has 17 characters


@dataclass(frozen=True)
class _Pair:
    key: str
    sep: str
    value: re.Match[str]  # _AFTER_KEY's match: groups qv or uv


def _pairs(text: str) -> Iterator[_Pair]:
    """What `_PAIR.finditer(text)` finds, in the same order, in time linear in the text."""
    position = 0
    for separator in _SEPARATOR.finditer(text):
        word_end = separator.start()
        while word_end > position and text[word_end - 1] in " \t":
            word_end -= 1
        if word_end > position and text[word_end - 1] in "\"'`":
            word_end -= 1
        if word_end > position and text[word_end - 1] == "\\":
            word_end -= 1
        if word_end - position < 3:
            continue  # inside the last pair's value, or no room for a word (`pwd`, the shortest)
        word_starts = _word_starts(text, max(position, word_end - _LONGEST_WORD), word_end)
        key_start = _key_start(text, word_starts, position) if word_starts else None
        value = _AFTER_KEY.match(text, word_end) if key_start is not None else None
        if value is None or key_start is None:
            continue
        yield _Pair(key=text[key_start:word_end], sep=value.group("sep"), value=value)
        position = value.end()


def _spellings() -> frozenset[str]:
    """Every ASCII spelling of _SECRET_WORDS, lowercased (`api_key`, `api-key`, `api key`, `apikey`, ...)."""
    joined = ("", "_", "-")
    words = {"password", "passwd", "passphrase", "pwd", "pass", "secret", "token", "apikey", "sessionid"}
    words |= {"credential", "credentials", "auth", "cookie", "sig", "signature"}
    words |= {f"api{j}key" for j in (*joined, " ")}
    for first in ("access", "private", "signing", "encryption", "master", "account", "license"):
        words |= {f"{first}{j}key" for j in joined}
    words |= {f"shared{a}access{b}key" for a in joined for b in joined}
    words |= {f"session{j}{last}" for j in joined for last in ("id", "key")}
    return frozenset(words)


_SPELLINGS = _spellings()
_SPELLING_LENGTHS = sorted({len(word) for word in _SPELLINGS}, reverse=True)
_AFTER_NO_LETTER = frozenset({"pass", "auth", "sig"})  # `(?<![A-Za-z])` in _SECRET_WORDS


def _word_starts(text: str, first: int, end: int) -> list[int]:
    """Where secret words that end at `end` start, from `first` on, leftmost first (`shared_access_key`
    and `access_key`). ASCII by set lookups; other text by the regex, for its case folding."""
    window = text[first:end]
    if not window.isascii() or (first > 0 and not text[first - 1].isascii()):
        starts = []
        while (word := _WORD_ENDING.search(text, first, end)) is not None:
            starts.append(word.start())
            first = word.start() + 1
        return starts
    lowered = window.lower()
    starts = []
    for length in _SPELLING_LENGTHS:
        start = end - length
        if start < first or lowered[start - first :] not in _SPELLINGS:
            continue
        if lowered[start - first :] in _AFTER_NO_LETTER and start > 0 and text[start - 1].isalpha():
            continue
        starts.append(start)
    return starts


def _key_start(text: str, word_starts: list[int], position: int) -> int | None:
    """The leftmost start of a key that ends in one of these words, as `_PAIR` finds it: at most 40 key
    characters before a word, preceded by no letter or digit (its lookbehind), not before `position`."""

    def starts_a_key(index: int) -> bool:
        return index == 0 or not _is_alphanumeric(text, index - 1)

    first_word = word_starts[0]
    start = None
    index = first_word
    while index >= position:
        if starts_a_key(index):
            start = index
        if index == 0 or index <= first_word - 40 or not _is_key_character(text, index - 1):
            break
        index -= 1
    if start is not None:
        return start
    # A key may also start inside the longest word, at a shorter one (`xxx...SHARED-ACCESS-KEY`).
    for index in range(max(first_word + 1, position), word_starts[-1] + 1):
        if starts_a_key(index) and any(
            word >= index and all(_is_key_character(text, i) for i in range(index, word)) for word in word_starts
        ):
            return index
    return None


def _find_pair_matches(text: str) -> Iterator[Span]:
    for pair in _pairs(text):
        value = pair.value
        quoted = value.group("qv") is not None
        group = "qv" if quoted else "uv"
        if _secret_value(pair.key, pair.sep, value.group(group), quoted, text, value.end(group)):
            yield Span(value.start(group), value.end(group), _kind(pair.key))


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


def _rest_of_line(word: str) -> str:
    """What a command's flag may be preceded by on its line: anything but a newline or the command's own name.

    `[^\n]*?` alone is quadratic: each of N names on one line scans to the line's end when no flag
    follows. Stopping at the next name keeps every character scanned once, and finds the same values:
    a flag after the second name is the first one after it too.
    """
    return rf"(?:(?!{word})[^\n])*?"


_MYSQL_WORD = r"\bmysql(?:dump|admin|import|sh)?\b"
_REDIS_WORD = r"\bredis-cli\b"
_SSHPASS_WORD = r"\bsshpass\b"
_FLAG = re.compile(
    r"""(?ix)(?<![\w-])--?(?P<key>password|passwd|pass|pwd|token|api-key|apikey|secret|client-secret|access-token
    |auth-token|private-key|key-password|db-password|admin-password|storepass|keypass|passphrase)(?:=|\s+)
    (?:(?P<q>["'])(?P<qv>[^"'\n]+)(?P=q)|(?P<uv>[^\s"']+))"""
)
_MYSQL = re.compile(
    rf"""{_MYSQL_WORD}{_rest_of_line(_MYSQL_WORD)}(?<!\S)-p(?P<v>[^\s'"\-][^\s'"]{{2,}}|'[^']+'|"[^"]+")"""
)
_CURL_USER = re.compile(r"""(?<![\w-])(?:-u|--user|--proxy-user)[ =]?(?P<q>["']?)[^\s:"']+:(?P<v>[^\s"']+)(?P=q)""")
_REDIS_CLI = re.compile(
    rf"""{_REDIS_WORD}{_rest_of_line(_REDIS_WORD)}(?<!\S)(?:-a|--pass)\s+(?P<q>["']?)(?P<v>[^\s"']+)(?P=q)"""
)
_ORACLE = re.compile(
    r"(?:jdbc:oracle:\w+:@?|\b(?:sqlplus|sqlldr|expdp|impdp)\s+(?:-\w+\s+)*)[\w.$#]+/(?P<v>[^\s/@\"']+)@"
)
_NETRC = re.compile(r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<v>\S+)")
_SSHPASS = re.compile(rf"""{_SSHPASS_WORD}{_rest_of_line(_SSHPASS_WORD)}(?<!\S)-p\s*(?P<v>'[^']+'|"[^"]+"|[^\s'"]+)""")


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
