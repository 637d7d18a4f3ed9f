"""API key secrets: generation and hashing. Only the hash is ever stored."""

from __future__ import annotations

import hashlib
import secrets

PREFIX = "ca_"


def generate_secret() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()
