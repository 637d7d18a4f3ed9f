"""The one cancel path of the assembly services: `assemble_or_cancel` for `context_assemble` and
`context_preview` alike.

A caller passes `cancelled` (e.g. the `is_set` of the Event its client's disconnect sets:
apps/core/client_gone.py, the WebSocket consumer). It is asked at every stage boundary and once
more after the last: once true, the assembly stops there with AssemblyCancelled, counted in
/metrics by the stage it stopped before and logged, and its caller records, caches and warms
nothing, since nobody waits for the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from apps.assembly.deadline import AssemblyCancelled
from apps.assembly.params import ContextParams
from apps.assembly.services.assembling import Outcome, assemble_outcome
from apps.core.fair_share import workspace_slot
from apps.core.replicas import replica_reads
from apps.metrics.registry import ASSEMBLIES_CANCELLED
from apps.profiles.services import ProfileInput
from apps.workspaces.models import Workspace

log = logging.getLogger(__name__)


def assemble_or_cancel(
    *,
    workspace: Workspace,
    params: ContextParams,
    started: float,
    cancelled: Callable[[], bool] | None,
    profile_draft: ProfileInput | None = None,
) -> Outcome:
    """`assemble_outcome` in one of the process's slots for the workspace (its fair share:
    apps/core/fair_share.py; 429 `overloaded` if none comes in time), reading a caught-up replica
    where one is configured (apps/core/replicas.py), or AssemblyCancelled (counted)
    once `cancelled()` is true; "record" is the stage when the client left after packing."""
    try:
        # Reads from a streaming replica holding the workspace's current version (apps/core/replicas.py).
        with (
            workspace_slot(workspace_id=workspace.pk, what="context assembly") as slot,
            replica_reads(workspace_id=workspace.pk),
        ):
            outcome = assemble_outcome(
                workspace=workspace,
                params=params,
                started=started,
                cancelled=slot.between_stages(cancelled),  # a waiting tenant may go first between stages
                profile_draft=profile_draft,
            )
        if cancelled is not None and cancelled():
            raise AssemblyCancelled("record")  # assembled, but nobody waits for it: leave no trace
    except AssemblyCancelled as exc:
        note_cancelled(workspace, exc)
        raise
    return outcome


def note_cancelled(workspace: Workspace, exc: AssemblyCancelled) -> None:
    """Count and log an assembly its caller cancelled (it leaves nothing else behind)."""
    ASSEMBLIES_CANCELLED.labels(stage=exc.stage).inc()
    log.info("workspace %s: %s", workspace.pk, exc)
