"""Allow-list patterns: regexes a workspace writes, run on every redaction in that workspace.

A user-written regex can backtrack for minutes in a backtracking engine (`(?:\\w|\\w\\w)+y` on a
40-character token), so these patterns are compiled with RE2 (`google-re2`), whose matching time
is linear in the value: no pattern can hang a worker, and the price of a pattern is known before
it runs. RE2 has no lookarounds and no backreferences; a pattern that needs them is refused when
it is added (`unsupported_pattern`), and one stored around the API allows nothing.

The cost is bounded three ways: a workspace keeps at most MAX_PATTERNS patterns of at most
MAX_PATTERN_LENGTH characters; a value longer than MAX_VALUE_LENGTH is never allowed by a pattern
(no false positive is that long); and one redaction spends at most MATCH_BUDGET_SECONDS on its
patterns, after which the rest of its findings are redacted (the safe side), logged once.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import re2

logger = logging.getLogger(__name__)

MAX_PATTERNS = 50  # per workspace
MAX_PATTERN_LENGTH = 500
MAX_VALUE_LENGTH = 2_000
MATCH_BUDGET_SECONDS = 0.25  # per redaction, all patterns together
_MAX_PROGRAM_BYTES = 8 << 20  # RE2's memory for one compiled pattern

AllowPattern = Any  # re2's compiled pattern (the package ships no type hints)


class UnsupportedPattern(Exception):
    """A valid regular expression that RE2 cannot run (a lookaround, a backreference, too large)."""


def compile_pattern(value: str) -> AllowPattern:
    """`value` compiled with RE2; raises `re.error` when it is no regex, UnsupportedPattern when RE2 cannot run it."""
    re.compile(value)  # the clearer message for a pattern that is no regex at all
    options = re2.Options()
    options.max_mem = _MAX_PROGRAM_BYTES
    options.log_errors = False
    try:
        return re2.compile(value, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        raise UnsupportedPattern(reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)) from exc


# Values a pattern is tried on when it is added: it must not match everything.
EMPTY_PROBES = ("", "x" * 40)


def matches_everything(pattern: AllowPattern) -> bool:
    """Whether the pattern would allow any value (it matches the empty value or a run of x)."""
    return any(pattern.fullmatch(probe) is not None for probe in EMPTY_PROBES)


def fullmatch(pattern: AllowPattern, value: str) -> bool:
    """Whether `pattern` matches all of `value`; linear in the value (RE2), never on a value over MAX_VALUE_LENGTH."""
    return len(value) <= MAX_VALUE_LENGTH and pattern.fullmatch(value) is not None


def log_budget_spent(patterns: int) -> None:
    logger.warning(
        "allow-list patterns used their %.0f ms budget in one redaction (%d patterns); the rest of its findings"
        " are redacted",
        MATCH_BUDGET_SECONDS * 1000,
        patterns,
    )
