"""`context_preview`: what `context_assemble` returns, plus the full trace and a what-if table.

Each what-if row is a real assembly of the same request at that budget (not recorded, not cached):
the budget changes more than the packing (how many search hits bring their neighbouring turns,
apps/assembly/adjacency.py; the context-window cap; an estimated model's margin), so re-packing the
first run's candidates promised figures a real run did not give (issue 19: 2000 -> "41 chunks", 50 got).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from opentelemetry.trace import Span

from apps.assembly.models import RecordOrigin
from apps.assembly.params import ContextParams
from apps.assembly.results import PreviewResult, WhatIf
from apps.assembly.services.assembling import Outcome
from apps.assembly.services.cancel import assemble_or_cancel
from apps.assembly.services.context import annotated, redacted, result_of
from apps.assembly.services.record import record_assembled
from apps.assembly.spans import assembly_started
from apps.core import telemetry
from apps.profiles.services import ProfileInput
from apps.workspaces.models import ApiKey, Workspace

WHAT_IF_BUDGETS = (1000, 2000, 4000, 8000)


def context_preview(
    *,
    workspace: Workspace,
    params: ContextParams,
    api_key: ApiKey | None = None,
    started: float | None = None,
    profile_draft: ProfileInput | None = None,
    cancelled: Callable[[], bool] | None = None,
    what_if: tuple[int, ...] = WHAT_IF_BUDGETS,
    origin: str = RecordOrigin.AGENT,
) -> PreviewResult:
    """Assemble `params` (never from the cache) and show every decision.

    The what-if rows (`what_if`: budgets; () for none) are the same request assembled at each budget:
    the row at the request's own budget is this answer, the others are real runs that are neither
    recorded nor cached, so a click on a row shows exactly its figures.
    With `profile_draft` (unsaved settings for `params.profile`, the profile page's "try it") nothing
    is written, not even the record: its request would name a profile whose settings it did not use.
    Once `cancelled()` is true (the page's client left) it stops at the next stage boundary and
    raises AssemblyCancelled, recording nothing. `origin`: page runs (the pages' previews, compares and
    replays) are recorded as such, kept out of the agents' figures.
    """
    started = time.perf_counter() if started is None else started
    if not telemetry.tracing():
        return _preview(workspace, params, api_key, started, profile_draft, cancelled, what_if, origin, span=None)
    name, attributes = assembly_started(workspace=workspace, params=params, run="preview", origin=origin)
    with telemetry.operation(name, attributes) as span:
        return _preview(workspace, params, api_key, started, profile_draft, cancelled, what_if, origin, span=span)


def _preview(
    workspace: Workspace,
    params: ContextParams,
    api_key: ApiKey | None,
    started: float,
    profile_draft: ProfileInput | None,
    cancelled: Callable[[], bool] | None,
    what_if: tuple[int, ...],
    origin: str,
    span: Span | None,
) -> PreviewResult:
    params = redacted(workspace, params)
    outcome = assemble_or_cancel(
        workspace=workspace, params=params, started=started, cancelled=cancelled, profile_draft=profile_draft
    )
    result = result_of(outcome)
    if profile_draft is None:
        record_assembled(
            workspace=workspace, params=params, outcome=outcome, result=result, api_key=api_key, origin=origin
        )
    if span is not None:
        annotated(span, workspace=workspace, params=params, outcome=outcome, result=result)
    rows = [_what_if(workspace, params, outcome, budget, cancelled, profile_draft) for budget in what_if]
    trace = (*(outcome.result.trace if outcome.result else ()), *outcome.extra_trace)
    return PreviewResult(result=result, trace=trace, what_if=tuple(rows))


def _what_if(
    workspace: Workspace,
    params: ContextParams,
    outcome: Outcome,
    budget: int,
    cancelled: Callable[[], bool] | None,
    profile_draft: ProfileInput | None,
) -> WhatIf:
    """The figures of the request at `budget`: this answer's at its own budget, else a real run's."""
    if budget != outcome.resolved.requested_budget:
        outcome = assemble_or_cancel(
            workspace=workspace,
            params=replace(params, token_budget=budget),
            started=time.perf_counter(),
            cancelled=cancelled,
            profile_draft=profile_draft,
        )
    if outcome.result is None:
        return WhatIf(token_budget=budget, tokens_used=0, items_included=0, truncated_count=0)
    return WhatIf(
        token_budget=budget,
        tokens_used=outcome.result.total_tokens,
        items_included=len(outcome.result.chunks),
        truncated_count=outcome.result.truncated_count,
    )
