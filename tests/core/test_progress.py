"""Command-line loaders show progress: a bar on a terminal, plain lines in a log."""

from __future__ import annotations

import io

from apps.core.progress import PLAIN_EVERY_SECONDS, ProgressBar


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_it_writes_plain_lines_with_count_rate_and_time_left_at_most_every_few_seconds() -> None:
    log, clock = io.StringIO(), Clock()
    bar = ProgressBar(total=1000, label="embedding", stream=log, clock=clock)
    clock.now += 10
    bar.update(100)  # first line at once
    clock.now += 1
    bar.update(150)  # within PLAIN_EVERY_SECONDS: no line
    clock.now += PLAIN_EVERY_SECONDS
    bar.update(400)
    clock.now += 4
    bar.update(1000)
    bar.close()
    assert log.getvalue().splitlines() == [
        "embedding: 100/1,000 items (10%), 10.0/s, about 1m30s left",
        "embedding: 400/1,000 items (40%), 25.0/s, about 24s left",
        "embedding: 1,000/1,000 items (100%), 50.0/s, done in 20s",
    ]
    assert "\r" not in log.getvalue()


def test_it_draws_a_bar_in_place_on_a_terminal() -> None:
    terminal = Terminal()
    bar = ProgressBar(total=200, label="embedding", stream=terminal)
    bar.update(50)
    bar.update(200)
    bar.close()
    drawn = terminal.getvalue()
    assert "\r" in drawn and "embedding" in drawn and "200/200" in drawn


def test_it_says_the_time_left_is_unknown_before_anything_is_done() -> None:
    log, clock = io.StringIO(), Clock()
    bar = ProgressBar(total=5, label="loading", stream=log, clock=clock)
    bar.update(0)
    assert log.getvalue() == "loading: 0/5 items (0%), 0.0/s, time left unknown\n"
