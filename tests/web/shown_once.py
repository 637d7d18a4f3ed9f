"""The secret a page shows once."""

from __future__ import annotations

import re


def shown_secret(html: str) -> str:
    """The secret of the "shown once" panel (its read-only field)."""
    match = re.search(r'id="secret-value"[^>]*value="([^"]+)"', html)
    assert match, "no shown-once panel"
    return match.group(1)
