"""LangGraph's long-term memory on Context Architect (`pip install "contextarch-client[langgraph]"`).

`ContextArchitectStore` is a LangGraph `BaseStore`: each namespace is a layer of the workspace
(kind `session`, under the `parent` layer given or the company root, external id `langgraph:` + the namespace's labels
joined by `/`), each value an item of that layer (kind `memory`, type `fact`, external id =
the key). The value is kept whole in the item's metadata and its text (the `index` fields, else a
`content` or `text` field, else the value as JSON) is the item's content, which the service embeds.
`search` with a `query` goes through the service's hybrid search (one context assembly per
namespace layer under the prefix, the hits of that layer ranked by their scores); without a query it
lists the values oldest first. Filters compare value fields as LangGraph's in-memory store does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import _compare_values

from contextarch_client import models
from contextarch_client.client import ContextArchitect
from contextarch_client.errors import Conflict

PREFIX = "langgraph:"
ITEM_TYPE = "fact"  # a memory's types are the service's closed set; the namespace layer marks the store's items
VALUE_KEY = "langgraph_value"  # where an item's metadata keeps the value


def namespace_id(namespace: tuple[str, ...]) -> str:
    """The layer's external id of a namespace (labels escaped, so a '/' inside one stays inside it)."""
    return PREFIX + "/".join(quote(label, safe="") for label in namespace)


def namespace_of(external_id: str | None) -> tuple[str, ...] | None:
    if not external_id or not external_id.startswith(PREFIX):
        return None
    return tuple(unquote(label) for label in external_id[len(PREFIX) :].split("/"))


def value_text(value: Mapping[str, Any], index: list[str] | None) -> str:
    """What the service embeds and searches for a value."""
    if index:
        texts = [text for path in index for text in get_text_at_path(value, path)]
        if texts:
            return "\n".join(texts)
    for field in ("content", "text"):
        if isinstance(value.get(field), str) and value[field].strip():
            return str(value[field])
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    return all(_compare_values(value.get(key), wanted) for key, wanted in (filter or {}).items())


def _namespace_matches(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want == "*" or want == have for want, have in zip(path, part, strict=True))


class ContextArchitectStore(BaseStore):
    """A LangGraph store whose namespaces are layers under `parent` (a layer id; the workspace's company
    root when omitted) and whose values are items."""

    def __init__(self, client: ContextArchitect, *, parent: int | None = None, search_token_budget: int = 4000) -> None:
        self.client = client
        self._parent = parent
        self.search_token_budget = search_token_budget
        self._layers: dict[tuple[str, ...], int] = {}

    # -- namespaces as layers ------------------------------------------------------------------------

    @property
    def parent(self) -> int:
        if self._parent is None:
            self._parent = self.client.list_layers(kind="company").results[0].id
        return self._parent

    def _namespaces(self) -> dict[tuple[str, ...], int]:
        """Every namespace of this store, with its layer id."""
        found: dict[tuple[str, ...], int] = {}
        for layer in self.client.iter_layers(kind="session", parent=self.parent, page_size=500):
            namespace = namespace_of(layer.external_id)
            if namespace is not None:
                found[namespace] = layer.id
        self._layers.update(found)
        return found

    def _layer(self, namespace: tuple[str, ...], *, create: bool) -> int | None:
        if namespace in self._layers:
            return self._layers[namespace]
        external_id = namespace_id(namespace)
        found = self.client.list_layers(kind="session", external_id=external_id).results
        if found:
            self._layers[namespace] = found[0].id
        elif create:
            name = ".".join(namespace)[:200]
            try:
                self._layers[namespace] = self.client.create_layer(
                    kind="session", name=name, parent=self.parent, external_id=external_id
                ).id
            except Conflict:  # created meanwhile
                return self._layer(namespace, create=False)
        return self._layers.get(namespace)

    def _items(self, layer: int) -> list[models.Item]:
        return list(self.client.iter_items(layer=layer, kind="memory", type=ITEM_TYPE, page_size=500))

    def _find(self, layer: int, key: str) -> models.Item | None:
        return next((item for item in self._items(layer) if item.external_id == key), None)

    # -- operations ----------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    def _get(self, op: GetOp) -> Item | None:
        layer = self._layer(op.namespace, create=False)
        found = None if layer is None else self._find(layer, op.key)
        return None if found is None else _item(op.namespace, found)

    def _put(self, op: PutOp) -> None:
        layer = self._layer(op.namespace, create=op.value is not None)
        if layer is None:
            return
        existing = self._find(layer, op.key)
        if op.value is None:
            if existing is not None:
                self.client.delete_item(existing.id)
            return
        value = dict(op.value)
        index = op.index if isinstance(op.index, list) else None
        content = value_text(value, index)
        if existing is not None:
            self.client.update_item(existing.id, content=content, metadata={VALUE_KEY: value})
            return
        self.client.create_item(
            layer=layer,
            kind="memory",
            type=ITEM_TYPE,
            title=op.key[:500],
            external_id=op.key,
            content=content,
            metadata={VALUE_KEY: value},
        )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        layers = {ns: layer for ns, layer in self._namespaces().items() if ns[: len(prefix)] == prefix}
        hits: list[tuple[float | None, tuple[str, ...], models.Item]] = []
        if op.query:
            ranked: list[tuple[float, tuple[str, ...], int]] = []
            for namespace, layer in layers.items():
                answer = self.client.get_context(
                    layer=layer,
                    query=op.query,
                    kinds=["memory"],
                    types=[ITEM_TYPE],
                    token_budget=self.search_token_budget,
                    format="json",
                )
                ranked += [
                    (chunk.score, namespace, chunk.id)
                    for chunk in answer.chunks
                    if chunk.source == "item" and chunk.layer == layer
                ]
            ranked.sort(key=lambda hit: -hit[0])
            for score, namespace, item_id in ranked:
                item = self.client.get_item(item_id)
                if _matches(_value(item), op.filter):
                    hits.append((score, namespace, item))
        else:
            for namespace, layer in sorted(layers.items()):
                hits += [(None, namespace, item) for item in self._items(layer) if _matches(_value(item), op.filter)]
        page = hits[op.offset : op.offset + op.limit]
        return [_search_item(namespace, item, score) for score, namespace, item in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces: set[tuple[str, ...]] = set()
        for namespace in self._namespaces():
            if all(_namespace_matches(namespace, condition) for condition in op.match_conditions or ()):
                namespaces.add(namespace if op.max_depth is None else namespace[: op.max_depth])
        return sorted(namespaces)[op.offset : op.offset + op.limit]


def _value(item: models.Item) -> dict[str, Any]:
    metadata = item.metadata if isinstance(item.metadata, dict) else {}
    value = metadata.get(VALUE_KEY)
    return dict(value) if isinstance(value, dict) else {"content": item.content}


def _item(namespace: tuple[str, ...], item: models.Item) -> Item:
    return Item(
        value=_value(item),
        key=str(item.external_id),
        namespace=namespace,
        created_at=item.created_at,
        updated_at=item.updated_at,
    )


def _search_item(namespace: tuple[str, ...], item: models.Item, score: float | None) -> SearchItem:
    return SearchItem(
        namespace=namespace,
        key=str(item.external_id),
        value=_value(item),
        created_at=item.created_at,
        updated_at=item.updated_at,
        score=score,
    )
