"""A conversation's parts for the conversation tests: sessions, messages, and two topics' turns."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from tests.support.tenants import Tenant

AUTH = [
    "I want to talk about authentication: how do users log in?",
    "For authentication we use OAuth login with Google.",
    "Authentication tokens: the login session expires after 30 minutes.",
    "Should login require two-factor authentication?",
    "Authentication uses OAuth and short login sessions.",
    "Failed login attempts lock the account after 5 tries.",
]


DATABASE = [
    "The Postgres database is slow on the orders table.",
    "Add an index to the orders table in the database.",
    "Database vacuum settings need tuning for large tables.",
    "Let's partition the events table in the database by month.",
    "Database connections: use a pool of 20.",
    "The reporting database is a read replica.",
]


def make_session(t: Tenant, name: str = "chat", external_id: str | None = None) -> int:
    body = {"kind": "session", "name": name, "parent": t.root.pk, "external_id": external_id}
    response = t.client.post("/api/v1/layers/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def message(t: Tenant, layer: int, content: str, **extra: Any) -> int:
    body = {"layer": layer, "kind": "message", "role": extra.pop("role", "user"), "content": content, **extra}
    response = t.client.post("/api/v1/items/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def messages(t: Tenant, layer: int, contents: list[str], *, start: datetime | None = None, **extra: Any) -> list[int]:
    """Messages one minute apart, alternating user/assistant, in one bulk request."""
    start = start or timezone.now() - timedelta(days=1)
    items = [
        {
            "kind": "message",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": text,
            "created_at": (start + timedelta(minutes=i)).isoformat(),
            **extra,
        }
        for i, text in enumerate(contents)
    ]
    response = t.client.post("/api/v1/items/bulk/", {"layer": layer, "items": items}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["ids"]
