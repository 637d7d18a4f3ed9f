"""Reads of the proxy's settings: a workspace's upstreams, the target of one call, where sessions go."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection

from apps.core.errors import NotFound
from apps.layers.models import Layer
from apps.proxy.errors import UPSTREAM_NOT_CONFIGURED, UPSTREAM_NOT_FOUND
from apps.proxy.models import ProxyCall, ProxySettings, Upstream, WireFormat
from apps.proxy.upstream_keys import Target, key_check, key_open
from apps.workspaces.models import Workspace


def upstreams_list(*, workspace: Workspace) -> list[Upstream]:
    return list(Upstream.objects.filter(workspace=workspace).order_by("kind"))


def upstream_get(*, workspace: Workspace, kind: str) -> Upstream:
    upstream = Upstream.objects.filter(workspace=workspace, kind=kind).first() if kind in WireFormat.values else None
    if upstream is None:
        raise NotFound(f"no {kind} upstream is configured", code=UPSTREAM_NOT_FOUND)
    return upstream


def upstream_target(*, workspace_id: int, kind: str, request_key: str | None) -> Target:
    """The workspace's upstream of `kind` with its key opened, or with the request's own key instead
    (`X-Upstream-Authorization`, used for this call only). 404 `upstream_not_configured` without one."""
    upstream = Upstream.objects.filter(workspace_id=workspace_id, kind=kind).first()
    if upstream is None:
        raise NotFound(
            f"this workspace has no {kind} upstream: an admin sets one in the pages or at /api/v1/upstreams/{kind}/",
            code=UPSTREAM_NOT_CONFIGURED,
        )
    if request_key is not None:
        return Target(kind=kind, base_url=upstream.base_url, key=key_check(request_key))
    if not upstream.key_sealed:
        return Target(kind=kind, base_url=upstream.base_url)
    key = key_open(workspace_id=workspace_id, kind=kind, sealed=bytes(upstream.key_sealed))
    return Target(kind=kind, base_url=upstream.base_url, key=key)


def proxy_default_parent(*, workspace_id: int) -> Layer | None:
    """Where the proxy's new sessions go when a call names no parent (None: the company layer)."""
    row = ProxySettings.objects.filter(workspace_id=workspace_id).select_related("default_parent").first()
    return row.default_parent if row is not None else None


def proxy_call_of_trace(workspace_id: int, trace_id: str) -> dict[str, Any] | None:
    """The proxied call that carried the assembly `trace_id` (a trace section, `proxy`): the upstream it
    went to, the model, the usage the upstream reported beside our count of what we sent, its timings.
    None when no proxied call carried it (or its record is not written yet: it is, after the answer)."""
    call = ProxyCall.objects.filter(workspace_id=workspace_id, trace_id=trace_id).order_by("-id").first()
    if call is None:
        return None
    return {
        "upstream": {"kind": call.kind, "base_url": call.upstream_url},
        "model": call.model,
        "status": call.status,
        "stream": call.stream,
        "reported": {
            "prompt_tokens": call.reported_prompt_tokens,
            "completion_tokens": call.reported_completion_tokens,
        },
        "counted": {"prompt_tokens": call.prompt_tokens, "context_tokens": call.context_tokens},
        "turns_stored": call.turns_stored,
        "prepare_ms": call.prepare_ms,
        "first_byte_ms": call.first_byte_ms,
        "upstream_ms": call.upstream_ms,
        "warnings": call.warnings,
        "created_at": call.created_at.isoformat(),
    }


@dataclass(frozen=True)
class ModelCalls:
    """A workspace's proxied calls of one model over a range: how many, the upstream's latency, the tokens
    it reported, and how far our count of each prompt was from what it reported (reported / ours - 1;
    `counted`: the calls that error rests on, those with both figures)."""

    model: str
    calls: int
    failed: int  # answered 4xx / 5xx, or not at all
    upstream_p50_ms: float | None
    upstream_p95_ms: float | None
    first_byte_p50_ms: float | None
    prompt_tokens: int  # as the upstream reported them
    completion_tokens: int
    counted: int
    error_p50: float | None
    error_p95: float | None

    @property
    def error_p50_percent(self) -> float | None:
        return None if self.error_p50 is None else round(self.error_p50 * 100, 1)

    @property
    def error_p95_percent(self) -> float | None:
        return None if self.error_p95 is None else round(self.error_p95 * 100, 1)


_BY_MODEL = """
SELECT model, count(*), count(*) FILTER (WHERE status >= 400),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY upstream_ms),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY upstream_ms),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY first_byte_ms),
       coalesce(sum(reported_prompt_tokens), 0), coalesce(sum(reported_completion_tokens), 0),
       count(*) FILTER (WHERE reported_prompt_tokens IS NOT NULL AND prompt_tokens > 0),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY reported_prompt_tokens::float8 / nullif(prompt_tokens, 0) - 1),
       percentile_cont(0.95) WITHIN GROUP (ORDER BY reported_prompt_tokens::float8 / nullif(prompt_tokens, 0) - 1)
FROM proxy_proxycall WHERE workspace_id = %s AND created_at >= %s
GROUP BY model ORDER BY count(*) DESC, model LIMIT 50
"""


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def proxy_calls_by_model(*, workspace_id: int, since: datetime) -> list[ModelCalls]:
    """Per model, the workspace's proxied calls since `since` (one query, on the calls' recent index)."""
    with connection.cursor() as cursor:
        cursor.execute(_BY_MODEL, [workspace_id, since])
        rows = cursor.fetchall()
    return [
        ModelCalls(
            model=model,
            calls=calls,
            failed=failed,
            upstream_p50_ms=_rounded(p50, 1),
            upstream_p95_ms=_rounded(p95, 1),
            first_byte_p50_ms=_rounded(first, 1),
            prompt_tokens=int(prompt),
            completion_tokens=int(completion),
            counted=counted,
            error_p50=_rounded(e50, 4),
            error_p95=_rounded(e95, 4),
        )
        for model, calls, failed, p50, p95, first, prompt, completion, counted, e50, e95 in rows
    ]
