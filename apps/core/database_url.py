"""DATABASE_URL <-> a Django DATABASES entry, both ways (no Django setup needed: settings use it).

The project's settings read DATABASE_URL with `database_from_url`; a process that starts another
(a test server, a benchmark's uvicorn, `serve.py`'s workers) hands its own database on with
`url_from_database`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlparse


def database_from_url(url: str) -> dict[str, Any]:
    """A Django DATABASES entry from a postgres:// URL (host may be a socket dir in ?host=)."""
    parsed = urlparse(url)
    if parsed.scheme not in ("postgres", "postgresql", "postgresql+psycopg"):
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"DATABASE_URL must be a postgres:// URL, got scheme {parsed.scheme!r}")
    query = parse_qs(parsed.query)
    host = query.get("host", [parsed.hostname or ""])[0]
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")) or "postgres",
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": host,
        "PORT": str(parsed.port or ""),
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
    }


def url_from_database(entry: dict[str, Any]) -> str:
    """The DATABASE_URL for a DATABASES entry (socket dirs included): the inverse of database_from_url,
    so a subprocess (a test server, a benchmark's daphne) can join this process's database."""
    auth = f"{quote(entry['USER'] or '')}:{quote(entry['PASSWORD'] or '')}@"
    host, port, name = entry["HOST"] or "", entry["PORT"] or "", quote(entry["NAME"])
    if host.startswith("/"):
        return f"postgresql://{auth}/{name}?host={quote(host)}" + (f"&port={port}" if port else "")
    return f"postgresql://{auth}{host}{':' + port if port else ''}/{name}"


def replica_database(primary: dict[str, Any], replica: dict[str, Any], *, pool_timeout: float) -> dict[str, Any]:
    """A replica's DATABASES entry: its own address with the primary's connection options (pool,
    statement and lock timeouts, HNSW settings), a pool wait of `pool_timeout` (a lost replica is
    given up on quickly: the primary answers instead), and in tests the primary's test database."""
    entry = {**primary, **{k: replica[k] for k in ("NAME", "USER", "PASSWORD", "HOST", "PORT")}}
    options = dict(primary.get("OPTIONS", {}))
    if isinstance(options.get("pool"), dict):
        options["pool"] = {**options["pool"], "timeout": pool_timeout}
    entry["OPTIONS"] = options
    entry["TEST"] = {"MIRROR": "default"}
    return entry
