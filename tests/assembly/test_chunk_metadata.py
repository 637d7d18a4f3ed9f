"""Every default format shows a chunk's type, confidence and timestamp, not only a
conversation turn's."""

from __future__ import annotations

import json

import pytest

from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_every_format_shows_a_memorys_type_confidence_and_timestamp(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk)
    memory = {"kind": "memory", "type": "fact", "content": "Backups are kept 35 days.", "confidence": 0.9}
    bulk(tenant, session, [{**memory, "created_at": "2026-03-04T10:00:00Z"}])
    text = ask(tenant, layer=session, query="backups", format="text")["context"]
    assert text == "[memory/fact 2026-03-04 0.90] Backups are kept 35 days."
    markdown = ask(tenant, layer=session, query="backups", format="markdown")["context"]
    assert markdown.startswith("# Context\n\n### memory/fact · 2026-03-04 · 0.90 · session layer\n")
    (chunk,) = json.loads(ask(tenant, layer=session, query="backups", format="json")["context"])
    assert (chunk["type"], chunk["confidence"], chunk["timestamp"]) == ("memory/fact", 0.9, "2026-03-04T10:00:00+00:00")
