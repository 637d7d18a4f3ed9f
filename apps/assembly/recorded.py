"""The request as an assembly record keeps it: the one ContextParams JSON shape, and what was decided.

A record's `request` is `params_to_json` of the request as the caller sent it, so a replay reads it
back with `params_from_json`; the writer redacts its `query` and `error` (agents paste logs and keys
there). What is not kept is named in `not_recorded`: the query vector (8192 floats per record, and
no one reads them back). Beside it, `resolved` holds what the service decided (layer, budget, model,
format, types, zone, ranking and its weights, agent type, template), which the console shows.

Records written before this shape (no `resolved` key) kept only the resolved values, flat, with the
layer as `layer` and `query_vector` a flag. They are read as they are (`recorded_request`) rather than
migrated: what the caller asked cannot be recovered from them, and a rewrite of every record's JSON
would be a long write over the largest table for records that age out anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from apps.assembly.params import ContextParams, params_from_json, params_to_json

NOT_RECORDED = ("query_vector",)
PARAM_NAMES = frozenset(field.name for field in fields(ContextParams))


@dataclass(frozen=True)
class RecordedRequest:
    """A record's request read back: the params to run again and what the record could not give back."""

    params: ContextParams
    not_recorded: tuple[str, ...]  # fields the caller sent that the record does not keep
    zone_lost: str = ""  # an old record's token zone, which its request alone cannot bring back


def request_to_record(*, params: ContextParams, resolved: dict[str, Any]) -> dict[str, Any]:
    """`params` as the record keeps it (the writer redacts `query` and `error`), with `resolved` beside it."""
    left_out = list(NOT_RECORDED) if params.query_vector is not None else []
    kept = params_to_json(replace(params, query_vector=None))
    return {**kept, "not_recorded": left_out, "resolved": resolved}


def request_decisions(request: Any) -> dict[str, Any]:
    """What the service decided for a recorded request (zone, weights, format, ...), in either shape."""
    if not isinstance(request, dict):
        return {}
    resolved = request.get("resolved")
    return resolved if isinstance(resolved, dict) else request


def recorded_request(request: dict[str, Any], *, layer_id: int | None) -> RecordedRequest:
    """The request a record keeps, as ContextParams; `layer_id` (the record's layer) when it names none."""
    if isinstance(request.get("resolved"), dict):
        params = params_from_json({name: value for name, value in request.items() if name in PARAM_NAMES})
        if params.layer_id is None and params.layer_external_id is None:
            params = replace(params, layer_id=layer_id)
        return RecordedRequest(params=params, not_recorded=tuple(request.get("not_recorded") or ()))
    return _older_request(request, layer_id=layer_id)


def _older_request(request: dict[str, Any], *, layer_id: int | None) -> RecordedRequest:
    """A record written before the one shape: its flat, resolved values."""
    layer = request.get("layer") or layer_id
    params = ContextParams(
        layer_id=int(layer) if layer else None,
        query=str(request.get("query") or ""),
        token_budget=int(request["token_budget"]) if request.get("token_budget") else None,
        model=request.get("model") or None,
        profile=request.get("profile") or None,
        format=request.get("format") or None,
        kinds=tuple(request.get("kinds") or ()),
        types=tuple(request.get("types") or ()),
        agent_type=str(request.get("agent_type") or ""),
        group_id=str(request.get("group_id") or ""),
        conversation_id=request.get("conversation_id") or None,
        ranking=request.get("ranking") or None,
        template=request.get("template") or None,
        expand_related=int(request.get("expand_related") or 0),
        include_superseded=bool(request.get("include_superseded")),
        exclude=tuple(str(key) for key in request.get("exclude") or ()),  # what a proxied prompt carried
    )
    zone = str(request.get("zone") or "")
    return RecordedRequest(
        params=params,
        not_recorded=NOT_RECORDED if request.get("query_vector") else (),
        zone_lost="" if zone in ("", "normal") else zone,
    )
