"""The consumption scope of an assembly, as AssemblyRecord fields.

Called by the assembly service while it builds the record's one insert: no query of its own. It lives
here, not in apps/consumption, because assembly writes it and a lower app never imports a higher one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from apps.assembly.params import ContextParams
    from apps.assembly.resolve import Resolved
    from apps.engine import Chunk


def scope_of(*, params: ContextParams, resolved: Resolved) -> dict[str, Any]:
    """Session (the named conversation, else the layer's external id), group, agent type, iteration.

    The agent type is the resolved one (the request's, else its profile's).
    """
    return {
        "session": params.conversation_id or resolved.layer.external_id or "",
        "group_id": params.group_id,
        "agent_type": resolved.agent_type,
        "iteration": params.iteration,
    }


def injected_packages(chunks: Iterable[Chunk]) -> list[int]:
    """Ids of the package items among the chunks, in context order."""
    return [c.id for c in chunks if c.source == "item" and c.kind == "package"]


def record_fields(*, params: ContextParams, resolved: Resolved, chunks: Iterable[Chunk]) -> dict[str, Any]:
    """The consumption fields of a freshly assembled record."""
    return {**scope_of(params=params, resolved=resolved), "injected_packages": injected_packages(chunks)}


def cached_record_fields(*, scope: Mapping[str, Any], chunks: Iterable[Chunk]) -> dict[str, Any]:
    """The consumption fields of a cache hit: the stored scope and the stored chunks' packages.

    A cached answer carries its original's trace_id, so the agent reports against the original:
    the hit is the same injection (session, group, agent type and iteration are all part of the
    cache key) and the stats count it once.
    """
    return {**scope, "injected_packages": injected_packages(chunks)}
