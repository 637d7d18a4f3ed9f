"""One polling helper for tests that wait on another process or thread."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(check: Callable[[], T], *, timeout: float = 30.0, interval: float = 0.1, what: str = "") -> T:
    """Call `check` until it returns something truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or check}")
        time.sleep(interval)
