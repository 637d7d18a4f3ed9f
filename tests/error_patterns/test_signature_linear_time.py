"""Issue 26 #1: the error signature is linear in the error (frame lines of 1,000 characters were
tried in the square of their length: 1 s for a 20k error of indented lines), and finds the same frames."""

from __future__ import annotations

import random
import re
import time

from apps.error_patterns import signature
from apps.error_patterns.signature import error_signature

# The frame pattern as it was: its Go alternatives backtracked over the whole line.
QUADRATIC_FRAMES = re.compile(
    r"""^\s*(?:
        traceback\ \(most\ recent\ call\ last\):
      | file\ ["'<].*?["'>]?,\ line\ \d+.*
      | at\ \S.*
      | \d+:\s+0x[0-9a-f]+.*
      | \#\d+\s+.*
      | goroutine\ \d+\ \[.*
      | \.\.\.\ \d+\ more
      | -->\ .*
      | \^+~*\s*$
      | [\w./*()\-]+\(.*\)
      | \s+\S+:\d+(?:\ \+0x[0-9a-f]+)?
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
HOSTILE_LINES = [" " * 999 + "a", "a(" * 499 + "a", " " + "a:1" * 333, 'file "' + "a" * 994, "/" + "a /" * 333]


def test_the_frame_pattern_takes_the_same_lines() -> None:
    chooser = random.Random(5)
    alphabet = [*"a1 \t().:/*-+x0#^~\r", "main.main", "0x1d", " +0x", "at ", "file ", '"', ", line 3", "--> "]
    alphabet += ["goroutine 7 [", "... 3 more", "\u00a0"]
    for _ in range(20_000):
        line = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 20)))
        assert bool(signature._FRAME_LINES.match(line)) == bool(QUADRATIC_FRAMES.match(line)), line


def test_a_signature_of_long_hostile_lines_takes_linear_time() -> None:
    prose = "\n".join(["psycopg.errors.UndefinedTable: relation does not exist " * 18] * 20)
    started = time.perf_counter()
    error_signature(prose)
    bound = 1 + 10 * (time.perf_counter() - started)
    for line in HOSTILE_LINES:
        started = time.perf_counter()
        error_signature("\n".join([line] * 20))  # the API's 20,000 characters
        assert time.perf_counter() - started < bound, line[:20]


def test_an_error_over_the_cap_keeps_its_first_and_last_lines() -> None:
    error = "KeyError: 'first'\n" + "x = 1\n" * 40_000 + "ValueError: last"
    assert error_signature(error) == error_signature(error[:50_000] + "\n" + error[-50_000:])
    assert error_signature(error).startswith("keyerror: <str>")
