"""The sessions and conversations of a workspace, with their message and assembly counts.

Three queries whatever the number of rows: the layers, the layer tree, the grouped records.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from apps.assembly.selectors import session_record_groups
from apps.layers.selectors import conversation_layers, layer_scope, layer_tree
from apps.workspaces.models import Workspace

NEVER = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class SessionRow:
    id: int
    kind: str
    name: str
    external_id: str | None
    messages: int
    assemblies: int
    last_assembly_at: datetime | None


def sessions_list(*, workspace: Workspace, limit: int = 200) -> list[SessionRow]:
    """Conversations (multi-session) and sessions, most recently assembled first."""
    layers = conversation_layers(workspace=workspace, limit=limit)
    # The same assemblies as the session's page (assembly.selectors.session_records): made on the layer or
    # below it, or naming it as their session; grouped once, then summed per row (each group once).
    tree = layer_tree(workspace_id=workspace.pk)
    subtrees = {layer.pk: {layer.pk, *layer_scope(tree=tree, layer_id=layer.pk)[2]} for layer in layers}
    external_ids = [layer.external_id for layer in layers if layer.external_id]
    groups = session_record_groups(
        workspace_id=workspace.pk, layer_ids=set().union(*subtrees.values()), sessions=external_ids
    )
    figures: dict[int, dict[str, Any]] = {}
    for layer in layers:
        mine = [
            g
            for g in groups
            if g["layer_id"] in subtrees[layer.pk] or (layer.external_id and g["session"] == layer.external_id)
        ]
        if mine:
            figures[layer.pk] = {"n": sum(g["n"] for g in mine), "last": max(g["last"] for g in mine)}
    own_messages: dict[int, int] = {layer.pk: layer.messages for layer in layers}  # type: ignore[attr-defined]
    rows = [
        SessionRow(
            id=layer.pk,
            kind=layer.get_kind_display(),
            name=layer.name,
            external_id=layer.external_id,
            # its own and its sessions' (a conversation's turns are written in the sessions below it)
            messages=sum(own_messages.get(pk, 0) for pk in subtrees[layer.pk]),
            assemblies=figures.get(layer.pk, {}).get("n", 0),
            last_assembly_at=figures.get(layer.pk, {}).get("last"),
        )
        for layer in layers
    ]
    rows.sort(key=lambda row: (row.last_assembly_at or NEVER, row.id), reverse=True)
    return rows
