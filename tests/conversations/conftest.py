"""Fixtures for the conversation-graph tests: a session, and background work drained (helpers: sessions.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.core import background
from tests.conversations.sessions import make_session
from tests.support.tenants import Tenant


@pytest.fixture
def session(tenant: Tenant) -> int:
    return make_session(tenant, external_id="sess-graph")


@pytest.fixture(autouse=True)
def _drain_background() -> Iterator[None]:
    """Transactional tests enqueue real background work; let it finish before the tables are flushed."""
    yield
    background.wait_idle(120)
