"""A workspace's layers, read once per content version and kept in this process.

Assembly needs the request's layer and the whole tree (for scope and names) on every request;
both change only with a write, and every write draws a new content version (apps/core/versions.py).
The version is read before the rows, so a snapshot is never newer than its key claims; a write
that commits later draws another version and the next request reloads. Without a shared cache
(no REDIS_URL) each process draws its own versions, so a layer another process just created may be
missing here: callers that miss a layer read again with `fresh=True` before answering 404.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property

from apps.core.errors import InvalidInput, NotFound
from apps.core.versions import content_version
from apps.layers.errors import AMBIGUOUS_EXTERNAL_ID, LAYER_NOT_FOUND
from apps.layers.models import Layer
from apps.layers.selectors import LayerTree, layer_scope

MAX_SNAPSHOTS = 256  # workspaces kept per process


@dataclass(frozen=True)
class LayerSnapshot:
    """Every layer of one workspace (treat as read-only: it is shared between requests)."""

    layers: dict[int, Layer]
    tree: LayerTree
    _scopes: dict[int, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def scope(self, layer_id: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
        """`layer_scope` of the layer (ancestors nearest first, itself, descendants), worked out once
        per snapshot: every request at a layer asks for it."""
        found = self._scopes.get(layer_id)
        if found is None:
            ancestors, own, descendants = layer_scope(tree=self.tree, layer_id=layer_id)
            found = self._scopes[layer_id] = (tuple(ancestors), tuple(own), tuple(descendants))
        return found

    @cached_property
    def names(self) -> dict[int, str]:
        """Each layer's name by id (read-only, shared like the snapshot)."""
        return {pk: name for pk, (_, _, name) in self.tree.items()}

    def get(self, layer_id: int) -> Layer:
        layer = self.layers.get(layer_id)
        if layer is None:
            raise NotFound(f"layer {layer_id} not found", code=LAYER_NOT_FOUND)
        return layer

    def by_external_id(self, external_id: str, *, kinds: tuple[str, ...] = ()) -> list[Layer]:
        """Layers with this external id (of these kinds, if given), oldest first."""
        found = [x for x in self.layers.values() if x.external_id == external_id and (not kinds or x.kind in kinds)]
        return sorted(found, key=lambda x: x.pk)

    def get_by_external_id(self, external_id: str) -> Layer:
        found = self.by_external_id(external_id)
        if not found:
            raise NotFound(f"layer with external_id {external_id!r} not found", code=LAYER_NOT_FOUND)
        if len(found) > 1:
            raise InvalidInput(
                f"several layers have external_id {external_id!r}; give the layer id", code=AMBIGUOUS_EXTERNAL_ID
            )
        return found[0]


_lock = threading.Lock()
_snapshots: OrderedDict[tuple[int, str], LayerSnapshot] = OrderedDict()


def layer_snapshot(*, workspace_id: int, fresh: bool = False) -> LayerSnapshot:
    """The workspace's layers as of its current content version (one query on a miss; `fresh` always reads)."""
    key = (workspace_id, content_version(workspace_id))
    with _lock:
        hit = None if fresh else _snapshots.get(key)
        if hit is not None:
            _snapshots.move_to_end(key)
            return hit
    layers = {layer.pk: layer for layer in Layer.objects.filter(workspace_id=workspace_id)}
    snapshot = LayerSnapshot(
        layers=layers, tree={pk: (layer.parent_id, layer.kind, layer.name) for pk, layer in layers.items()}
    )
    with _lock:
        _snapshots[key] = snapshot
        while len(_snapshots) > MAX_SNAPSHOTS:
            _snapshots.popitem(last=False)
    return snapshot
