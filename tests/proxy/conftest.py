"""The proxy against a live server: two workspaces, facts stored in the first, a fake upstream per format."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from apps.core import background
from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create
from apps.proxy.models import ProxyCall
from apps.proxy.services import upstream_set
from tests.conftest import Tenant, make_tenant
from tests.live import server_idle, uvicorn_live  # noqa: F401  (fixture)
from tests.proxy.fake_upstream import FakeUpstream, fake_upstream
from tests.waiting import wait_until

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
    openai: FakeUpstream
    anthropic: FakeUpstream

    def calls(self, count: int) -> list[ProxyCall]:
        """The first `count` calls the live server recorded (it records each after its answer)."""
        found = wait_until(
            lambda: (rows := list(ProxyCall.objects.order_by("id"))) and len(rows) >= count and rows,
            what=f"{count} proxied calls recorded",
        )
        return found[:count]

    def messages(self, session: str) -> list[Item]:
        return list(Item.objects.filter(layer__external_id=session, kind="message").order_by("id"))


@pytest.fixture
def proxied(transactional_db: None, uvicorn_live: str) -> Iterator[Proxied]:  # noqa: F811
    a, b = make_tenant("acme"), make_tenant("globex")
    items_create(
        layer=a.root, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    with fake_upstream("openai") as openai, fake_upstream("anthropic") as anthropic:
        upstream_set(workspace=a.workspace, kind="openai", base_url=openai.url, key=UPSTREAM_KEY)
        upstream_set(workspace=a.workspace, kind="anthropic", base_url=anthropic.url, key=UPSTREAM_KEY)
        assert background.wait_idle(120)
        yield Proxied(base=uvicorn_live, a=a, b=b, openai=openai, anthropic=anthropic)
        assert background.wait_idle(120)
        server_idle(uvicorn_live, a.secret)
