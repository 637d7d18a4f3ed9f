"""Fixtures of the real-process server tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """A private var/ (its own embedded PostgreSQL) outside pytest's temp root: a concurrent pytest
    session resets that root to 0700, and postgres (run by pgserver as its own user under root) must
    still reach its data. KEEP_VAR_DIR=1 keeps it for a look afterwards."""
    path = Path(tempfile.mkdtemp(prefix="ca-var-"))
    path.chmod(0o755)
    try:
        yield path / "var"
    finally:
        if os.environ.get("KEEP_VAR_DIR") is None:
            shutil.rmtree(path, ignore_errors=True)
