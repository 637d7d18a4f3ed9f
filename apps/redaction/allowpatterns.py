"""Allow-list patterns: regexes a workspace writes, run on every redaction in that workspace.

A user-written regex can backtrack for minutes (`(?:\\w|\\w\\w)+y` on a 40-character token), so
these patterns are never run with `re`: they are compiled with the `regex` module and every match
carries its `timeout=`. Validation probes a new pattern with a budget and rejects a slow one; at
redaction time a pattern that times out counts as not matching (the value is redacted, the safe
side) and is skipped for the rest of that redaction, so one bad entry costs a request at most one
budget per pattern.
"""

from __future__ import annotations

import logging

import regex

logger = logging.getLogger(__name__)

MAX_PATTERN_LENGTH = 500
VALIDATION_TIMEOUT_SECONDS = 0.05
MATCH_TIMEOUT_SECONDS = 0.02

AllowPattern = regex.Pattern[str]

# Values a pattern is tried on when it is added: it must not match everything, and must be fast
# on the shapes the detectors find (long runs of token characters). `regex` fails at once when a
# literal the pattern requires is absent, so one probe holds every token character.
_TOKEN_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
EMPTY_PROBES = ("", "x" * 40)
SPEED_PROBES = ("x" * 40, _TOKEN_CHARACTERS, _TOKEN_CHARACTERS[::-1] + ".")


class PatternTooSlow(Exception):
    """The pattern did not finish a probe within the validation budget."""


def compile_pattern(value: str) -> AllowPattern:
    """`value` compiled for the allow-list; raises `regex.error` when it is not a regex."""
    return regex.compile(value)


def matches_everything(pattern: AllowPattern) -> bool:
    """Whether the pattern would allow any value; raises PatternTooSlow on a probe over budget."""
    for probe in (*EMPTY_PROBES, *SPEED_PROBES):
        try:
            matched = pattern.fullmatch(probe, timeout=VALIDATION_TIMEOUT_SECONDS)
        except TimeoutError as exc:
            raise PatternTooSlow from exc
        if matched is not None and probe in EMPTY_PROBES:
            return True
    return False


def fullmatch(pattern: AllowPattern, value: str) -> bool | None:
    """Whether `pattern` matches all of `value`; None when it ran out of time (logged, without the value)."""
    try:
        return pattern.fullmatch(value, timeout=MATCH_TIMEOUT_SECONDS) is not None
    except TimeoutError:
        logger.warning(
            "allow-list pattern %r timed out after %.0f ms; treating it as not matching",
            pattern.pattern[:100],
            MATCH_TIMEOUT_SECONDS * 1000,
        )
        return None
