"""A context request as the service takes it, after the API edge validated it."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ContextParams:
    """What the caller asked for; unset fields fall back to the profile, then to settings."""

    layer_id: int | None = None
    layer_external_id: str | None = None
    query: str = ""
    query_vector: tuple[float, ...] | list[float] | None = None
    token_budget: int | None = None
    model: str | None = None
    profile: str | None = None
    format: str | None = None
    kinds: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    min_confidence: float | None = None
    group_id: str = ""
    agent_type: str = ""
    iteration: int | None = None  # the agent's attempt at its task (consumption is tracked per iteration)
    conversation_id: str | None = None
    message_id: int | None = None  # compile from this message: the window is its branch back from it
    context_window: int | None = None
    tokens_used: int | None = None
    ranking: str | None = None
    template: str | None = None
    expand_related: int = 0
    error: str = ""
    timeout_ms: int | None = None  # None: settings.ASSEMBLY_TIMEOUT_MS; 0: no timeout
    user: str = ""  # a member's username: their personalized layer summaries where they exist
    include_superseded: bool = False  # superseded items stay candidates (apps/layers/supersession.py)
    # Candidates the caller's prompt already carries, as "source:id" ("item:12", "summary:4"; the proxy:
    # the turns of its call, and its session's summary when the prompt has every turn in full): never
    # candidates, whatever found them (the conversation window, a search, a neighbour), traced
    # `in_prompt`. Unlike a `kinds` filter, it leaves the other layers' summaries and hints in.
    exclude: tuple[str, ...] = ()


_NAMES = tuple(f.name for f in fields(ContextParams))


def params_to_json(params: ContextParams) -> dict[str, Any]:
    """A JSON-safe dict for queueing (Celery takes JSON).

    What `dataclasses.asdict` gave, without its deep copy: every field is a scalar, a datetime or a
    tuple of strings, but for the query vector (a list is copied)."""
    data = {name: getattr(params, name) for name in _NAMES}
    if isinstance(data["query_vector"], list):
        data["query_vector"] = list(data["query_vector"])
    for name in ("since", "until"):
        if data[name] is not None:
            data[name] = data[name].isoformat()
    return data


def params_from_json(data: dict[str, Any]) -> ContextParams:
    values = dict(data)
    for name in ("since", "until"):
        if values.get(name):
            values[name] = datetime.fromisoformat(values[name])
    for name in ("kinds", "types", "exclude"):
        values[name] = tuple(values.get(name) or ())
    if values.get("query_vector") is not None:
        values["query_vector"] = tuple(values["query_vector"])
    return ContextParams(**values)
