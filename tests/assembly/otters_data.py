"""A session whose middle turn alone says "otters", for the recall and retrieval-row tests."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.support.api import bulk, layer
from tests.support.tenants import Tenant

OTTER_TURNS = ("Weigh-in this morning.", "The otters swam in the brook.", "Biscuit slept all day.")


def otter_turns(t: Tenant, external_id: str, start: datetime, step: timedelta, *, moods: bool = False) -> int:
    """A session of three user turns, `step` apart from `start`, whose middle one alone says "otters";
    their external ids are the session's first letter and 0..2 (and with `moods`, metadata mood m0..m2)."""
    session = layer(t, "session", t.root.pk, external_id=external_id)
    turns: list[dict[str, object]] = [
        {
            "kind": "message",
            "role": "user",
            "content": text,
            "external_id": f"{external_id[0]}{i}",
            "created_at": (start + i * step).isoformat(),
            **({"metadata": {"mood": f"m{i}"}} if moods else {}),
        }
        for i, text in enumerate(OTTER_TURNS)
    ]
    bulk(t, session, turns)
    return session
