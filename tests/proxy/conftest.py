"""The proxy against a live server: two workspaces, facts stored in the first, a fake upstream per format."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.core import background
from apps.layers.services import ItemInput, items_create
from apps.proxy.services import upstream_set
from tests.proxy.proxied import FACTS, UPSTREAM_KEY, Proxied
from tests.support.fake_provider import fake_provider
from tests.support.live import server_idle
from tests.support.tenants import make_tenant


@pytest.fixture
def proxied(transactional_db: None, uvicorn_live: str) -> Iterator[Proxied]:
    a, b = make_tenant("acme"), make_tenant("globex")
    items_create(
        layer=a.root, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    with fake_provider("openai") as openai, fake_provider("anthropic") as anthropic:
        upstream_set(workspace=a.workspace, kind="openai", base_url=openai.url, key=UPSTREAM_KEY)
        upstream_set(workspace=a.workspace, kind="anthropic", base_url=anthropic.url, key=UPSTREAM_KEY)
        assert background.wait_idle(120)
        yield Proxied(base=uvicorn_live, a=a, b=b, openai=openai, anthropic=anthropic)
        assert background.wait_idle(120)
        server_idle(uvicorn_live, a.secret)
