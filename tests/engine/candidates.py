"""Engine candidates for the engine tests: a fixed now, a candidate with defaults, o200k token counts."""

from __future__ import annotations

from datetime import UTC, datetime

from apps.core.tokenizer import count_tokens
from apps.engine import Candidate

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def o200k(text: str) -> int:
    return count_tokens(text, "o200k_base")


def cand(id: int, content: str, **kw: object) -> Candidate:
    defaults: dict[str, object] = {
        "kind": "memory",
        "type": "fact",
        "layer_id": 1,
        "layer_name": "session",
        "created_at": NOW,
    }
    defaults.update(kw)
    return Candidate(id=id, content=content, **defaults)  # type: ignore[arg-type]
