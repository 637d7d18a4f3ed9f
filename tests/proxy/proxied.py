"""What the proxy tests share: the facts stored, the upstream key, the proxied live server with its fake upstreams."""

from __future__ import annotations

from dataclasses import dataclass

from apps.layers.models import Item
from apps.proxy.models import ProxyCall
from tests.support.fake_provider import FakeProvider
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until

UPSTREAM_KEY = "sk-upstream-Secret-0123456789abcdef"


FACTS = [
    ("backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("deploys", "Builds are promoted from staging to production every Tuesday."),
]


@dataclass
class Proxied:
    base: str
    a: Tenant
    b: Tenant
    openai: FakeProvider
    anthropic: FakeProvider

    def calls(self, count: int) -> list[ProxyCall]:
        """The first `count` calls the live server recorded (it records each after its answer)."""
        found = wait_until(
            lambda: (rows := list(ProxyCall.objects.order_by("id"))) and len(rows) >= count and rows,
            what=f"{count} proxied calls recorded",
        )
        return found[:count]

    def messages(self, session: str) -> list[Item]:
        return list(Item.objects.filter(layer__external_id=session, kind="message").order_by("id"))
