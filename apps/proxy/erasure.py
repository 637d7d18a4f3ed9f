"""Erasure of a user's proxied conversation (apps/core/erasure.py).

The proxy keeps an OpenAI `user` / Anthropic `metadata.user_id` as the name of that user's session
(`proxy-user:<user>`, conversation.session_external_id): erasing the user deletes the session with
every turn in it. A call's warnings that hold a text match are rewritten (its figures stay).
"""

from __future__ import annotations

from apps.core.erasure import RECORDS, ErasureRun, eraser, finder, scrub
from apps.core.errors import NotFound
from apps.layers.models import LayerKind
from apps.layers.selectors import layer_get_by_external_id
from apps.proxy.conversation import session_external_id
from apps.proxy.models import ProxyCall
from apps.workspaces.models import Workspace


def user_session_find(run: ErasureRun) -> None:
    if not run.target.user:
        return
    workspace = Workspace(pk=run.workspace_id)  # only its id is read
    external_id = session_external_id(header="", user=run.target.user, turns=[])
    try:
        session = layer_get_by_external_id(workspace=workspace, external_id=external_id, kind=LayerKind.SESSION)
    except NotFound:
        return
    run.layer_ids.add(session.pk)


def calls_erase(run: ErasureRun) -> None:
    text = run.target.text
    if not text:
        return
    calls = [
        call
        for call in ProxyCall.objects.filter(workspace_id=run.workspace_id, warnings__icontains=text)
        if isinstance(call.warnings, list)
    ]
    run.count("proxy_calls", found=len(calls))
    if run.dry_run:
        return
    for call in calls:
        call.warnings = [scrub(w, text) if isinstance(w, str) else w for w in call.warnings]
    ProxyCall.objects.bulk_update(calls, ["warnings"])
    run.count("proxy_calls", rewritten=len(calls))


def register() -> None:
    finder("proxy.user_session", user_session_find)
    eraser(RECORDS, "proxy.calls", calls_erase)
