"""Each API operation as a `Call`: what to send, whether it may be retried, and how to read the answer.

The sync and async clients only differ in how they send a `Call`; the operations are written once.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Generic, TypeVar

from contextarch_client import models
from contextarch_client.params import AttemptParams, ContextParams, HistoryParams, ItemFields

R = TypeVar("R")


@dataclass(frozen=True)
class Call(Generic[R]):
    """One request. `idempotent` calls (reads, assembly) may be sent again as they are; the others
    are POSTs that carry an Idempotency-Key so that a repeat is answered, not written twice."""

    method: str
    path: str
    parse: Callable[[Any], R]
    params: Mapping[str, Any] | None = None
    body: Any = None
    idempotent: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)
    content: bytes | None = None  # a raw body (sent with `headers`' Content-Type) instead of JSON


def _query(values: Mapping[str, Any]) -> dict[str, Any]:
    """Query parameters without the unset ones; lists stay lists (sent repeated), booleans as true/false."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = str(value).lower() if isinstance(value, bool) else list(value) if isinstance(value, tuple) else value
    return out


def _page_of(model: type[models.T]) -> Callable[[Any], models.Page[models.T]]:
    def parse(body: Any) -> models.Page[models.T]:
        return models.Page[model].model_validate(body)  # type: ignore[valid-type]

    return parse


def context(params: ContextParams) -> Call[models.ContextResult]:
    # Assembly changes no content (it records a trace): safe to send again.
    return Call("POST", "/api/v1/context/", models.ContextResult.model_validate, body=dict(params))


def context_stream_query(params: ContextParams) -> dict[str, Any]:
    return _query({k: list(v) if isinstance(v, (list, tuple)) else v for k, v in params.items()})


def trace(trace_id: str) -> Call[models.Trace]:
    return Call("GET", f"/api/v1/traces/{trace_id}/", models.Trace.model_validate)


def history(params: HistoryParams) -> Call[models.HistoryResult]:
    values: dict[str, Any] = dict(params)
    if "ids" in values:
        values["ids"] = ",".join(str(i) for i in values["ids"])
    return Call("GET", "/api/v1/history/", models.HistoryResult.model_validate, params=_query(values))


def layers_list(
    *, kind: str | None, external_id: str | None, parent: int | None, page: int | None, page_size: int | None
) -> Call[models.Page[models.Layer]]:
    query = _query({"kind": kind, "external_id": external_id, "parent": parent, "page": page, "page_size": page_size})
    return Call("GET", "/api/v1/layers/", _page_of(models.Layer), params=query)


def layer_get(layer_id: int) -> Call[models.Layer]:
    return Call("GET", f"/api/v1/layers/{int(layer_id)}/", models.Layer.model_validate)


def layer_create(*, kind: str, name: str, parent: int | None, external_id: str | None) -> Call[models.Layer]:
    body = {"kind": kind, "name": name, "parent": parent, "external_id": external_id}
    return Call("POST", "/api/v1/layers/", models.Layer.model_validate, body=body, idempotent=False)


def items_list(
    *, layer: int | None, kind: str | None, type: str | None, page: int | None, page_size: int | None
) -> Call[models.Page[models.Item]]:
    query = _query({"layer": layer, "kind": kind, "type": type, "page": page, "page_size": page_size})
    return Call("GET", "/api/v1/items/", _page_of(models.Item), params=query)


def item_get(item_id: int) -> Call[models.Item]:
    return Call("GET", f"/api/v1/items/{int(item_id)}/", models.Item.model_validate)


def item_create(*, layer: int, fields: ItemFields) -> Call[models.Item]:
    return Call("POST", "/api/v1/items/", models.Item.model_validate, body={"layer": layer, **fields}, idempotent=False)


def item_update(*, item_id: int, fields: ItemFields) -> Call[models.Item]:
    # The same changes sent again leave the same item: safe to repeat.
    return Call("PATCH", f"/api/v1/items/{int(item_id)}/", models.Item.model_validate, body=dict(fields))


def item_delete(item_id: int) -> Call[None]:
    # Not repeated after a lost answer (a repeat would answer 404); only a refused connection is tried again.
    return Call("DELETE", f"/api/v1/items/{int(item_id)}/", _nothing, idempotent=False)


def layer_delete(layer_id: int) -> Call[None]:
    return Call("DELETE", f"/api/v1/layers/{int(layer_id)}/", _nothing, idempotent=False)


def _nothing(body: Any) -> None:
    return None


def items_bulk(*, layer: int, items: Sequence[Mapping[str, Any]]) -> Call[models.BulkCreated]:
    body = {"layer": layer, "items": [dict(i) for i in items]}
    return Call("POST", "/api/v1/items/bulk/", models.BulkCreated.model_validate, body=body, idempotent=False)


def attempt(params: AttemptParams) -> Call[models.AttemptRecorded]:
    body = dict(params)
    return Call("POST", "/api/v1/attempts/", models.AttemptRecorded.model_validate, body=body, idempotent=False)


def error_match(*, error: str, min_confidence: float | None, limit: int | None) -> Call[models.ErrorPatternMatches]:
    body = _query({"error": error, "min_confidence": min_confidence, "limit": limit})
    return Call("POST", "/api/v1/error-patterns/match/", models.ErrorPatternMatches.model_validate, body=body)


def consumption(*, trace_id: str, used: Sequence[int]) -> Call[models.ConsumptionRecorded]:
    # The API answers the same report again as a duplicate (200), so a retry cannot double count.
    body = {"trace_id": trace_id, "used": list(used)}
    return Call("POST", "/api/v1/consumption/", models.ConsumptionRecorded.model_validate, body=body)


def tokens_count(
    *,
    model: str | None,
    text: str | None,
    messages: Sequence[Mapping[str, Any]] | None,
    tools: Sequence[Mapping[str, Any]] | None,
) -> Call[models.TokenCount]:
    body = _query({"model": model, "text": text, "messages": messages, "tools": tools})
    return Call("POST", "/api/v1/tokens/", models.TokenCount.model_validate, body=body)


def status() -> Call[models.Status]:
    return Call("GET", "/api/v1/status/", models.Status.model_validate)


ARCHIVE_TYPE = "application/zip"


def workspace_export_query(*, embeddings: bool) -> dict[str, Any]:
    return _query({"embeddings": embeddings})


def archive_bytes(source: str | os.PathLike[str] | bytes | BinaryIO) -> bytes:
    """An archive to import: its bytes, a path to it, or a binary file open on it."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, os.PathLike)):
        return Path(source).read_bytes()
    return source.read()


def workspace_import(archive: bytes) -> Call[models.WorkspaceImported]:
    # A POST with an Idempotency-Key: a repeat after a lost answer is answered, not restored twice.
    return Call(
        "POST",
        "/api/v1/workspace/import/",
        models.WorkspaceImported.model_validate,
        idempotent=False,
        headers={"Content-Type": ARCHIVE_TYPE},
        content=archive,
    )


def erase(
    *,
    item_ids: Sequence[int] | None,
    external_id_prefix: str | None,
    user: str | None,
    text: str | None,
    dry_run: bool,
    dry_run_id: int | None,
) -> Call[models.Erasure]:
    body = _query(
        {
            "item_ids": list(item_ids) if item_ids is not None else None,
            "external_id_prefix": external_id_prefix,
            "user": user,
            "text": text,
            "dry_run_id": dry_run_id,
        }
    )
    body["dry_run"] = dry_run
    return Call("POST", "/api/v1/erasure/", models.Erasure.model_validate, body=body, idempotent=False)


def erasures_list(*, page: int | None, page_size: int | None) -> Call[models.Page[models.Erasure]]:
    return Call(
        "GET", "/api/v1/erasure/", _page_of(models.Erasure), params=_query({"page": page, "page_size": page_size})
    )


def erasure_get(erasure_id: int) -> Call[models.Erasure]:
    return Call("GET", f"/api/v1/erasure/{int(erasure_id)}/", models.Erasure.model_validate)


def supersessions_list(
    *, state: str | None, layer: int | None, page: int | None, page_size: int | None
) -> Call[models.Page[models.Supersession]]:
    query = _query({"state": state, "layer": layer, "page": page, "page_size": page_size})
    return Call("GET", "/api/v1/supersessions/", _page_of(models.Supersession), params=query)


def supersession_decide(proposal_id: int, *, accept: bool) -> Call[models.Supersession]:
    # With an Idempotency-Key: a repeat after a lost answer gets that answer, not a 409 for its own decision.
    decision = "accept" if accept else "reject"
    path = f"/api/v1/supersessions/{int(proposal_id)}/{decision}/"
    return Call("POST", path, models.Supersession.model_validate, idempotent=False)
