"""What the regular expressions that see user text cost on hostile input (issue 26, ReDoS).

Every compiled pattern found in the modules below (redaction detectors, error signatures, the
other regexes run on queries, errors and item content) is timed on inputs made by repeating one
short unit up to a size: `"value:" * N` is the one that held a worker for minutes. A pattern is
linear when its worst time grows with the size, not with its square. The units are the literals
and prefixes the patterns start with, so each pattern meets the inputs that make it try (and
fail) a match at every position. Used by `manage.py bench_redaction` and by the timed tests.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

MODULES = (
    "apps.redaction.tokens",
    "apps.redaction.context",
    "apps.redaction.named",
    "apps.redaction.entries",
    "apps.redaction.pii",
    "apps.redaction.entropy",
    "apps.redaction.redactor",
    "apps.error_patterns.signature",
    "apps.error_patterns.matching",
    "apps.conversations.importance",
    "apps.assembly.sources.communities",
    "apps.core.text",
    "apps.summaries.extractive",
    "apps.engine.rank",
    "apps.engine.dates",
)

# Short units that a pattern's match starts with, or that its loops consume: each is repeated up
# to the size tried. Together they reach the keywords of every detector (`mysql`, `login`,
# `value:`, `PuTTY-...`), separators and quotes, and runs of token characters.
HOSTILE_UNITS = (
    "a", "A", "1", "_", "-", ".", " ", "\n", "\n ", "\t", "=", ":", "'", '"', "`", "/", "\\", "+", "@",
    "a ", "1 ", "1-", "+1", "+1 ", "x-", "a:", "a=", "a@", "a.", "@a", "a@a.", "/a", "a/", "\\a", "~/a",
    "..", "'a", '"a', "<", "<a>", "(", "(1)", "(1) ", "123-", "1 1", "1-1", "1.", "1,", "1e", "1:", "0x",
    "0xa ", "a_", "a-a", "a.b.c", "a/b/c", "C:\\", "C:\\a", "a b", "{", "{\"a\":", "é", "漢",
    "value:", "value: x", "name:", "name: a\n", "name: a\nvalue: ", "value: a\nname: ",
    '{"name": "a", ', '"value": "', "password=", "password ", "password is ", "pass=", "token:", "key=",
    "secret:", "SECRET_KEY=", "export a=", "aws", "aws secret", "awssk", "login ", "login -p ", "-p ",
    "mysql ", "mysql -p", "sqlcmd ", "htpasswd -b ", "htpasswd -b a a ", "redis-cli ", "sshpass ",
    "machine a ", "authorization: ", "authorization: a ", "bearer ", "x-api-key:", "http://", "http://a",
    "http://a:", "a://a:a", "?token=", "--password ", "-u a:", "jdbc:oracle:a:", "sqlplus -a ", "a/a@",
    "<password>", "<password>a", "phone:", "phone: 1", "tel=+", "-----BEGIN PRIVATE KEY-----", "-----BEGIN",
    "PuTTY-User-Key-File-2: ", "eyJ", "eyJa.", "AKIA", "AC", "GB00", "GB00 AAAA", "M", "Ma.", "sk-",
    "xoxb-1-", "[REDACTED:a]", "<n>", "<n> ", "<n>-", "file \"", "at ", "#1 ", "a(", "a()", "00:00:00 ",
    "2020-01-01", "decided", "we decided to ", "because",
)  # fmt: skip
SIZES = (10_000, 50_000, 200_000)
# Finders skip a pattern when a literal it needs is absent from the text: a tail that holds them all
# makes every pattern run over the repeated unit (on its own line, so line-bound loops still meet it).
TAIL = "\n-:=@+/?&'\"`://"


def hostile(unit: str, size: int, *, tail: bool = False) -> str:
    """`unit` repeated to exactly `size` characters (the last ones TAIL's when `tail`)."""
    body = (unit * (size // len(unit) + 1))[:size]
    return body[: size - len(TAIL)] + TAIL if tail else body


@dataclass(frozen=True)
class Pattern:
    name: str  # module.attribute[index:kind]
    compiled: Any  # re.Pattern, or re2's pattern: anything with finditer


def patterns() -> list[Pattern]:
    """Every compiled pattern of MODULES, also inside tuples of (kind, pattern) or (pattern, replacement)."""
    found: dict[int, Pattern] = {}
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        short = module_name.rsplit(".", 1)[-1]
        for attribute, value in vars(module).items():
            for suffix, candidate in _compiled_in(value):
                found.setdefault(id(candidate), Pattern(f"{short}.{attribute}{suffix}", candidate))
    return list(found.values())


def _compiled_in(value: object) -> Iterator[tuple[str, Any]]:
    if _is_pattern(value):
        yield "", value
    elif isinstance(value, tuple):
        for index, entry in enumerate(value):
            if isinstance(entry, tuple):
                for part in entry:
                    if _is_pattern(part):
                        kind = f":{entry[0]}" if isinstance(entry[0], str) else ""
                        yield f"[{index}{kind}]", part


def _is_pattern(value: object) -> bool:
    return callable(getattr(value, "finditer", None)) and isinstance(getattr(value, "pattern", None), str)


def time_scan(compiled: Any, text: str) -> float:
    """Seconds to find every match of `compiled` in `text`."""
    started = time.perf_counter()
    for _ in compiled.finditer(text):
        pass
    return time.perf_counter() - started


def time_call(function: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    result = function(text)
    if isinstance(result, Iterator):
        for _ in result:
            pass
    return time.perf_counter() - started


@dataclass(frozen=True)
class Worst:
    unit: str
    tail: bool
    seconds: dict[int, float | None]  # size -> seconds; None: skipped, its estimate over the limit
    estimate: dict[int, float]  # size -> quadratic estimate of a skipped size


def worst_case(
    measure: Callable[[str], float],
    *,
    sizes: tuple[int, ...] = SIZES,
    units: tuple[str, ...] = HOSTILE_UNITS,
    keep: int = 3,
    max_seconds: float = 5.0,
) -> Worst:
    """The unit that costs most, screened at the smallest size, with its time at every size.

    The `keep` worst units of the screen are timed at the larger sizes; a size whose quadratic
    estimate from the last measured one passes `max_seconds` is not run (quadratic patterns would
    take minutes at 200k), and its estimate is kept instead.
    """
    screen = sorted(
        ((measure(hostile(u, sizes[0], tail=t)), u, t) for u in units for t in (False, True)), reverse=True
    )[:keep]
    best: Worst | None = None
    for first, unit, tail in screen:
        seconds: dict[int, float | None] = {sizes[0]: first}
        estimate: dict[int, float] = {}
        last_size, last = sizes[0], first
        for size in sizes[1:]:
            guess = last * (size / last_size) ** 2
            if guess > max_seconds:
                seconds[size] = None
                estimate[size] = guess
                last_size, last = size, guess
                continue
            last_size, last = size, measure(hostile(unit, size, tail=tail))
            seconds[size] = last
        candidate = Worst(unit, tail, seconds, estimate)
        if best is None or _largest(candidate) > _largest(best):
            best = candidate
    assert best is not None
    return best


def _largest(worst: Worst) -> float:
    size = max(worst.seconds)
    value = worst.seconds[size]
    return value if value is not None else worst.estimate[size]


def describe(worst: Worst) -> str:
    cells = []
    for size, value in worst.seconds.items():
        cells.append(f"{value * 1000:9.1f}" if value is not None else f"~{worst.estimate[size]:7.0f}s")
    return " ".join(cells) + f"  worst unit {worst.unit!r}" + (" + tail" if worst.tail else "")
