"""The one place an upstream key is checked, sealed or opened.

A key is checked (printable ASCII without spaces: it goes into a header), sealed under the server's
key bound to its workspace and wire format (apps/core/sealing.py), and only ever opened to be sent
upstream. `Target` carries an opened key for one call and never shows it in a repr.
"""

from __future__ import annotations

from dataclasses import dataclass

from apps.core.errors import InvalidInput
from apps.core.sealing import server_seal, server_unseal
from apps.proxy.errors import INVALID_UPSTREAM_KEY, UPSTREAM_KEY_UNREADABLE

SEALING_PURPOSE = "upstream keys"
MAX_KEY_CHARS = 1000


def _binding(workspace_id: int, kind: str) -> bytes:
    return f"upstream\x00{workspace_id}\x00{kind}".encode()


def key_check(value: str) -> str:
    """The key as it will be sent, or InvalidInput `invalid_upstream_key` (never echoing it)."""
    key = value.strip()
    if key.lower().startswith("bearer "):
        key = key[7:].strip()
    if not 1 <= len(key) <= MAX_KEY_CHARS or not key.isascii() or not key.isprintable() or " " in key:
        raise InvalidInput(
            f"the key must be 1 to {MAX_KEY_CHARS} printable ASCII characters without spaces",
            code=INVALID_UPSTREAM_KEY,
        )
    return key


def key_seal(*, workspace_id: int, kind: str, key: str) -> bytes:
    return server_seal(SEALING_PURPOSE, key_check(key).encode(), bound_to=_binding(workspace_id, kind))


def key_open(*, workspace_id: int, kind: str, sealed: bytes) -> str:
    """The stored key, or InvalidInput `upstream_key_unreadable` (SECRET_KEY changed without a fallback)."""
    opened = server_unseal(SEALING_PURPOSE, sealed, bound_to=_binding(workspace_id, kind))
    if opened is None:
        raise InvalidInput(
            "the stored upstream key cannot be read (SECRET_KEY changed?): an admin sets it again",
            code=UPSTREAM_KEY_UNREADABLE,
        )
    return opened.decode()


@dataclass(frozen=True)
class Target:
    """Where one call goes: the base URL and the key to send (never stored, logged or traced)."""

    kind: str
    base_url: str
    key: str = ""

    def __repr__(self) -> str:  # a traceback or a debugger's repr never shows the key
        return f"Target(kind={self.kind!r}, base_url={self.base_url!r}, key={'***' if self.key else ''!r})"
