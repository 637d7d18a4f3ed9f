"""Progress of a command-line loader: items done of a total, the rate and the time left.

On a terminal it is a tqdm bar redrawn in place; anywhere else (a log file, a pipe, CI) it is
plain lines, one every PLAIN_EVERY_SECONDS at most and always the last, so a log stays readable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TextIO, cast

from tqdm import tqdm

PLAIN_EVERY_SECONDS = 5.0


def _duration(exact: float) -> str:
    seconds = round(exact)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


class ProgressBar:
    """`update(done)` with the absolute count; `close()` at the end (draws the last state)."""

    def __init__(
        self,
        *,
        total: int,
        label: str,
        stream: TextIO,
        unit: str = "item",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total, self.label, self.stream, self.unit, self.clock = total, label, stream, unit, clock
        self.started = clock()
        self.done = 0
        self._last_line: float | None = None
        isatty = getattr(stream, "isatty", None)
        self.bar = (
            tqdm(total=total, desc=label, unit=unit, file=stream, dynamic_ncols=True) if isatty and isatty() else None
        )

    def update(self, done: int) -> None:
        done = min(max(done, 0), self.total)
        if self.bar is not None:
            self.bar.update(done - self.done)
            self.done = done
            return
        self.done = done
        now = self.clock()
        if self._last_line is None or now - self._last_line >= PLAIN_EVERY_SECONDS:
            self._line(now)

    def line(self) -> str:
        """The plain line for the current state: done/total (percent), rate, time left."""
        elapsed = self.clock() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        percent = 100 * self.done / self.total if self.total else 100.0
        text = f"{self.label}: {self.done:,}/{self.total:,} {self.unit}s ({percent:.0f}%)"
        if self.done < self.total:
            left = f"about {_duration((self.total - self.done) / rate)} left" if rate > 0 else "time left unknown"
            return f"{text}, {rate:.1f}/s, {left}"
        return f"{text}, {rate:.1f}/s, done in {_duration(elapsed)}"

    def _line(self, now: float) -> None:
        self._last_line = now
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        else:
            self._line(self.clock())


def command_stream(output: Any) -> TextIO:
    """The stream under a management command's `self.stderr` (an OutputWrapper adds a newline to every write)."""
    return cast(TextIO, getattr(output, "_out", output))
