"""The workspace's layers as rows of a tree, with item counts, in one query.

Rows come out depth first (a parent right before its children, siblings by kind then name),
each with its depth, so a template can indent them without further queries.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Count

from apps.layers.models import KIND_RANK, Layer
from apps.layers.selectors import layers_list
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class LayerRow:
    """One layer as the pages show it."""

    id: int
    kind: str
    kind_label: str
    name: str
    external_id: str | None
    item_count: int
    depth: int

    @property
    def label(self) -> str:
        """The layer as an indented option label: "·· project: Billing"."""
        return f"{'· ' * self.depth}{self.kind_label}: {self.name}"


def layer_rows(*, workspace: Workspace) -> list[LayerRow]:
    """Every layer of the workspace, depth first, with its item count (one query)."""
    layers: list[Layer] = list(layers_list(workspace=workspace).annotate(item_count=Count("items")))
    ids = {layer.pk for layer in layers}
    children: dict[int | None, list[Layer]] = defaultdict(list)
    for layer in layers:
        # A parent outside the set cannot happen today; showing the layer as a root beats hiding it.
        children[layer.parent_id if layer.parent_id in ids else None].append(layer)
    for siblings in children.values():
        siblings.sort(key=lambda layer: (KIND_RANK.get(layer.kind, 99), layer.name.lower(), layer.pk))

    rows: list[LayerRow] = []
    stack: list[tuple[Layer, int]] = [(layer, 0) for layer in reversed(children[None])]
    while stack:
        layer, depth = stack.pop()
        rows.append(
            LayerRow(
                id=layer.pk,
                kind=layer.kind,
                kind_label=layer.get_kind_display(),
                name=layer.name,
                external_id=layer.external_id,
                item_count=layer.item_count,  # type: ignore[attr-defined]  # from .annotate() above
                depth=depth,
            )
        )
        stack.extend((child, depth + 1) for child in reversed(children[layer.pk]))
    return rows
