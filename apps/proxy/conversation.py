"""Which session a proxied call belongs to, and storing the turns of it that are not stored yet."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from apps.core.errors import Conflict, NotFound
from apps.layers.errors import LAYER_NOT_FOUND
from apps.layers.models import ItemKind, Layer, LayerKind
from apps.layers.selectors import layer_get, layer_get_by_external_id, layers_list, message_ids_by_external_id
from apps.layers.services import ItemInput, items_create, layer_create, messages_relink
from apps.proxy.selectors import proxy_default_parent
from apps.proxy.turns import Turn, turn_key, turn_keys
from apps.workspaces.models import Workspace

EXTERNAL_ID_PREFIX = "proxy:"


def _external_id(key: str) -> str:
    return EXTERNAL_ID_PREFIX + key[:40]


def session_external_id(*, header: str, user: str, turns: list[Turn]) -> str:
    """`X-Context-Session` as given, else the caller's user, else the hash of the conversation's opening
    (its messages up to the first user message: the same on every later call of the conversation)."""
    if header:
        return header[:200]
    if user:
        return f"proxy-user:{user}" if len(user) <= 180 else f"proxy-user:{hashlib.sha256(user.encode()).hexdigest()}"
    users = [i for i, turn in enumerate(turns) if turn.role == "user"]
    first = turn_keys(turns[: users[0] + 1] if users else turns[:1])
    return f"proxy-conversation:{first[-1][:32] if first else 'empty'}"


def _parent(workspace: Workspace, parent: str) -> Layer:
    if parent:
        found = layer_get(workspace=workspace, layer_id=int(parent)) if parent.isdigit() else None
        return found or layer_get_by_external_id(workspace=workspace, external_id=parent[:200])
    default = proxy_default_parent(workspace_id=workspace.pk)
    if default is not None:
        return default
    root = layers_list(workspace=workspace, kind=LayerKind.COMPANY).first()
    if root is None:
        raise NotFound("the workspace has no company layer", code=LAYER_NOT_FOUND)
    return root


def session_for_call(*, workspace: Workspace, external_id: str, parent: str = "") -> Layer:
    """The workspace's session of `external_id`, created under `parent` (a layer id or external id),
    else the workspace's default parent, else its company layer."""
    try:
        return layer_get_by_external_id(workspace=workspace, external_id=external_id, kind=LayerKind.SESSION)
    except NotFound:
        pass
    try:
        return layer_create(
            workspace=workspace,
            kind=LayerKind.SESSION,
            name=external_id[:200],
            parent=_parent(workspace, parent),
            external_id=external_id,
        )
    except Conflict:  # a concurrent call created it first
        return layer_get_by_external_id(workspace=workspace, external_id=external_id, kind=LayerKind.SESSION)


@dataclass(frozen=True)
class Stored:
    """The turns of a call once stored: the last one's key and item id, how many were new, and the
    item of each turn, in the turns' order (None: not known, a concurrent call stored it)."""

    last_key: str
    last_item: int | None
    created: int
    items: tuple[int | None, ...] = ()


def turns_store(*, session: Layer, turns: list[Turn], after: str = "", after_item: int | None = None) -> Stored:
    """Store the turns not stored yet, each the child of the one before it (`after`: the key of the
    turn they follow, "" from the start). A resent history adds nothing; an edited message branches."""
    keys: list[str] = []
    for turn in turns:
        keys.append(turn_key(keys[-1] if keys else after, turn))
    if not keys:
        return Stored(last_key=after, last_item=after_item, created=0)
    for _ in range(2):  # a concurrent call (the reply stored after its stream) may store some first
        try:
            return _store_new(session, turns, keys, after_item)
        except Conflict:
            continue
    known = message_ids_by_external_id(layer=session, external_ids=[_external_id(k) for k in keys])
    items = tuple(known.get(_external_id(k)) for k in keys)
    return Stored(last_key=keys[-1], last_item=known.get(_external_id(keys[-1])), created=0, items=items)


def _store_new(session: Layer, turns: list[Turn], keys: list[str], after_item: int | None) -> Stored:
    known = message_ids_by_external_id(layer=session, external_ids=[_external_id(k) for k in keys])
    new = [
        (i, turn, key) for i, (turn, key) in enumerate(zip(turns, keys, strict=True)) if _external_id(key) not in known
    ]
    if not new:
        items = tuple(known.get(_external_id(k)) for k in keys)
        return Stored(last_key=keys[-1], last_item=known[_external_id(keys[-1])], created=0, items=items)
    inputs = [
        ItemInput(
            kind=ItemKind.MESSAGE,
            role=turn.role,
            content=turn.rendered(),
            external_id=_external_id(key),
            metadata={"proxy": {"key": key, "tool_call_id": turn.tool_call_id} if turn.tool_call_id else {"key": key}},
        )
        for _, turn, key in new
    ]
    created = items_create(layer=session, items=inputs)
    ids = {**known, **{item.external_id: item.pk for item in created if item.external_id}}
    links = []
    for (index, _, key), item in zip(new, created, strict=True):
        parent = ids.get(_external_id(keys[index - 1])) if index else after_item
        links.append((ids[_external_id(key)], parent, item.importance))
    messages_relink(layer=session, links=links)
    items = tuple(ids.get(_external_id(k)) for k in keys)
    return Stored(last_key=keys[-1], last_item=ids[_external_id(keys[-1])], created=len(created), items=items)
