"""`context_preview`: what `context_assemble` returns, plus the full trace and a what-if table."""

from __future__ import annotations

import time
from collections.abc import Callable

from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.params import ContextParams
from apps.assembly.results import PreviewResult, WhatIf
from apps.assembly.services.assembling import assemble_outcome, pack
from apps.assembly.services.context import note_cancelled, redacted, result_of
from apps.assembly.services.record import record_assembled
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
) -> PreviewResult:
    """Assemble `params` (never from the cache) and show every decision.

    The what-if rows re-pack the same ranked candidates at other budgets: no second retrieval.
    With `profile_draft` (unsaved settings for `params.profile`, the profile page's "try it") nothing
    is written, not even the record: its request would name a profile whose settings it did not use.
    Once `cancelled()` is true (the page's client left) it stops at the next stage boundary and
    raises AssemblyCancelled, recording nothing.
    """
    started = time.perf_counter() if started is None else started
    params = redacted(workspace, params)
    try:
        outcome = assemble_outcome(
            workspace=workspace, params=params, started=started, profile_draft=profile_draft, cancelled=cancelled
        )
        if cancelled is not None and cancelled():
            raise AssemblyCancelled("record")
    except AssemblyCancelled as exc:
        note_cancelled(workspace, exc)
        raise
    result = result_of(outcome)
    if profile_draft is None:
        record_assembled(workspace=workspace, params=params, outcome=outcome, result=result, api_key=api_key)
    rows = []
    for budget in WHAT_IF_BUDGETS:
        if outcome.result is None:
            rows.append(WhatIf(token_budget=budget, tokens_used=0, items_included=0, truncated_count=0))
            continue
        alt = pack(outcome.ranked, outcome.resolved, budget)
        rows.append(
            WhatIf(
                token_budget=budget,
                tokens_used=alt.total_tokens,
                items_included=len(alt.chunks),
                truncated_count=alt.truncated_count,
            )
        )
    trace = (*(outcome.result.trace if outcome.result else ()), *outcome.extra_trace)
    return PreviewResult(result=result, trace=trace, what_if=tuple(rows))
