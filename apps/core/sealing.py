"""The one door to encryption at rest: AES-256-GCM, a random 96-bit nonce in front of each ciphertext.

Two kinds of key. A key derived from a secret the database never holds (`key_from`: an API key's
secret seals its idempotent answers, apps/workspaces/idempotency.py), or the server's own key for
what the server must read back by itself (`server_seal`: the upstream keys of the proxy), derived
from SECRET_KEY per purpose, so a database dump alone opens nothing. `bound_to` is the AES-GCM
associated data: it ties a sealed value to its row, so a value copied into another row does not open.
After SECRET_KEY changes, values sealed under a key in SECRET_KEY_FALLBACKS still open.
"""

from __future__ import annotations

import hashlib
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings

NONCE_BYTES = 12


def key_from(*parts: str) -> bytes:
    """A 256-bit key derived from `parts` (a label first, then the secrets it is made of)."""
    return hashlib.sha256("\x00".join(parts).encode()).digest()


def seal(key: bytes, plaintext: bytes, *, bound_to: bytes) -> bytes:
    """`plaintext` encrypted and authenticated under `key`, bound to `bound_to`."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, bound_to)


def unseal(key: bytes, sealed: bytes, *, bound_to: bytes) -> bytes | None:
    """The plaintext, or None when the key, the binding or the bytes are not those it was sealed with."""
    try:
        return AESGCM(key).decrypt(sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], bound_to)
    except (InvalidTag, ValueError):
        return None


def _server_keys(purpose: str) -> list[bytes]:
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return [key_from("contextarch sealing", purpose, secret) for secret in secrets]


def server_seal(purpose: str, plaintext: bytes, *, bound_to: bytes) -> bytes:
    """Sealed under the server's key for `purpose` (derived from SECRET_KEY)."""
    return seal(_server_keys(purpose)[0], plaintext, bound_to=bound_to)


def server_unseal(purpose: str, sealed: bytes, *, bound_to: bytes) -> bytes | None:
    """Opened with the server's key for `purpose`, or one of SECRET_KEY_FALLBACKS'; None if none opens it."""
    for key in _server_keys(purpose):
        opened = unseal(key, sealed, bound_to=bound_to)
        if opened is not None:
            return opened
    return None
