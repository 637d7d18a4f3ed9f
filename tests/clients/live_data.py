"""What the live client tests share: the facts stored, the tenants on the live server, a failing gateway."""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.layers.models import Layer
from tests.support.tenants import Tenant

FACTS = [
    ("backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("deploys", "Builds are promoted from staging to production every Tuesday."),
    ("android", "The mobile app crashes on Android 12 when the camera permission is denied."),
]


@dataclass
class Live:
    base: str
    a: Tenant
    b: Tenant
    session: Layer


@dataclass
class Gateway:
    """A reverse proxy in front of the live server that first fails as `failures` say.

    A failure `(status, headers, forwarded)` answers `status`; with `forwarded` the request still
    reaches the server first (the write lands, its answer is lost on the way back).
    """

    upstream: str
    failures: list[tuple[int, dict[str, str], bool]]
    seen: list[str] = field(default_factory=list)
    idempotency_keys: list[str | None] = field(default_factory=list)
    url: str = ""
