"""A ranking rule of issue 20 as an agent meets it through the API (engine/rank.py DATE_LIFT, engine/dates.py):
a hit said in the period the query names by its date comes first. tests/engine/test_query_dates.py holds
its unit tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def said(t: Tenant, external_id: str, start: datetime, turns: list[str]) -> int:
    """A session of `turns`, a minute apart from `start`, their external ids `external_id` + 0, 1, ..."""
    session = layer(t, "session", t.root.pk, external_id=external_id)
    bulk(
        t,
        session,
        [
            {
                "kind": "message",
                "role": "user" if i % 2 == 0 else "assistant",
                "content": text,
                "external_id": f"{external_id}{i}",
                "created_at": (start + timedelta(minutes=i)).isoformat(),
            }
            for i, text in enumerate(turns)
        ],
    )
    return session


def order(t: Tenant, query: str) -> list[str]:
    body = ask(t, layer=t.root.pk, query=query, token_budget=2000, format="text")
    return [c["external_id"] for c in body["chunks"]]


def test_a_hit_said_in_the_period_the_query_names_comes_first(tenant: Tenant) -> None:
    said(tenant, "m", datetime(2023, 5, 20, 18, tzinfo=UTC), ["Dave opened a car repair shop near the station."])
    said(tenant, "j", datetime(2023, 7, 2, 18, tzinfo=UTC), ["Dave opened a bakery near the station."])
    assert order(tenant, "What did Dave open near the station in May 2023?")[0] == "m0"
    assert order(tenant, "What did Dave open near the station in July 2023?")[0] == "j0"
    assert order(tenant, "What did Dave open near the station on 2 July, 2023?")[0] == "j0"
    assert order(tenant, "What did Dave open near the station on 21 May, 2023?")[0] == "m0"
