"""Files under var/ that hold secrets are readable by their owner only (mode 0600)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

OWNER_ONLY = 0o600


def secret_file_value(path: Path, *, generate: Callable[[], str]) -> str:
    """The secret kept in `path`, created (0600, never readable by others) on first use.

    An existing file with a wider mode (older installs wrote 0644) is tightened to 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_ONLY)
    except FileExistsError:
        if stat.S_IMODE(path.stat().st_mode) != OWNER_ONLY:
            path.chmod(OWNER_ONLY)
    else:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(generate())
    return path.read_text().strip()
