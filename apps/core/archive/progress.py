"""What an export or a restore reports as it goes: the rows to do, then the rows done."""

from __future__ import annotations

from typing import Protocol, TextIO

from apps.core.progress import ProgressBar


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def advance(self, rows: int) -> None: ...


class NoProgress:
    def start(self, total: int) -> None:
        pass

    def advance(self, rows: int) -> None:
        pass


class BarProgress:
    """A command's progress display (apps/core/progress.py) over an export's or a restore's rows."""

    def __init__(self, *, label: str, stream: TextIO) -> None:
        self.label, self.stream = label, stream
        self.bar: ProgressBar | None = None
        self.done = 0

    def start(self, total: int) -> None:
        self.bar = ProgressBar(total=total, label=self.label, stream=self.stream, unit="row")

    def advance(self, rows: int) -> None:
        self.done += rows
        if self.bar is not None:
            self.bar.update(self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
