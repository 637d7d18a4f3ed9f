"""Run an erasure (or its dry run) through every app's hooks and keep its receipt.

A text match erases whatever holds the text, so it is reviewed first: a real one names the dry run
of the same match (`dry_run_id`, within DRY_RUN_HOURS; the text is sent again, since nothing stores
it, and must give the same fingerprint). Items by id, by external id prefix and a user's items may be
erased at once (their dry run is optional). One erasure at a time per workspace.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from apps.core.erasure import ErasureRun, ErasureTarget, ordered_erasers, ordered_finders
from apps.core.errors import Conflict, InvalidInput, NotFound
from apps.core.field_errors import INVALID_DRY_RUN_ID
from apps.core.sealing import key_from
from apps.core.versions import content_changed
from apps.erasure.errors import (
    ERASURE_DRY_RUN_EXPIRED,
    ERASURE_DRY_RUN_MISMATCH,
    ERASURE_DRY_RUN_NOT_FOUND,
    ERASURE_DRY_RUN_REQUIRED,
    ERASURE_IN_PROGRESS,
    ERASURE_TARGET_REQUIRED,
)
from apps.erasure.models import ErasureRecord, ErasureState
from apps.workspaces.models import ApiKey, Workspace

log = logging.getLogger(__name__)

DRY_RUN_HOURS = 24
LOCK_NAMESPACE = 0x4552 << 48  # "ER": erasures, apart from any other advisory lock


def _hmac(workspace_id: int, label: str, value: str) -> str:
    key = key_from("contextarch erasure", str(workspace_id), settings.SECRET_KEY)
    return hmac.new(key, f"{label}\x00{value}".encode(), hashlib.sha256).hexdigest()


def named_of(*, workspace_id: int, target: ErasureTarget) -> dict[str, object]:
    """What the target names, as a receipt keeps it: ids as given, texts as HMACs (a text match's
    case-folded: the match ignores case)."""
    return {
        "item_ids": sorted(set(target.item_ids)),
        "external_id_prefix": _hmac(workspace_id, "prefix", target.external_id_prefix)
        if target.external_id_prefix
        else None,
        "user": _hmac(workspace_id, "user", target.user) if target.user else None,
        "text": _hmac(workspace_id, "text", target.text.casefold()) if target.text else None,
    }


def _fingerprint(named: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()


def _dry_run_checked(
    *, workspace: Workspace, dry_run_id: int | None, fingerprint: str, text: bool
) -> ErasureRecord | None:
    if dry_run_id is None:
        if text:
            raise InvalidInput(
                "a text match is erased only after its dry run: POST it with dry_run true, review the counts, "
                "then send the same request with dry_run_id",
                code=ERASURE_DRY_RUN_REQUIRED,
            )
        return None
    dry = ErasureRecord.objects.filter(workspace=workspace, pk=dry_run_id, dry_run=True).first()
    if dry is None:
        raise NotFound("dry run not found", code=ERASURE_DRY_RUN_NOT_FOUND)
    if dry.fingerprint != fingerprint:
        raise Conflict(
            "this request names something else than the dry run: send exactly what the dry run named",
            code=ERASURE_DRY_RUN_MISMATCH,
        )
    if dry.created_at < timezone.now() - timedelta(hours=DRY_RUN_HOURS):
        raise Conflict(
            f"the dry run is older than {DRY_RUN_HOURS} hours: review a new one", code=ERASURE_DRY_RUN_EXPIRED
        )
    return dry


@contextmanager
def _one_at_a_time(workspace_id: int) -> Iterator[None]:
    key = LOCK_NAMESPACE | workspace_id
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", [key])
        row = cur.fetchone()
        locked = bool(row and row[0])
    if not locked:
        raise Conflict("another erasure of this workspace is running", code=ERASURE_IN_PROGRESS)
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [key])


def erasure_run(
    *,
    workspace: Workspace,
    target: ErasureTarget,
    dry_run: bool,
    dry_run_id: int | None = None,
    api_key: ApiKey | None = None,
) -> ErasureRecord:
    """Find what `target` names in every place and remove or rewrite it there (a dry run only
    counts); the receipt, kept. Raises `erasure_dry_run_required` / `_not_found` / `_mismatch` /
    `_expired` and `erasure_in_progress` before anything is done."""
    if not (target.item_ids or target.external_id_prefix or target.user or target.text):
        raise InvalidInput(
            "name what to erase: item_ids, external_id_prefix, user or text", code=ERASURE_TARGET_REQUIRED
        )
    named = named_of(workspace_id=workspace.pk, target=target)
    fingerprint = _fingerprint(named)
    if dry_run and dry_run_id is not None:
        raise InvalidInput("a dry run names no dry run", code=INVALID_DRY_RUN_ID)
    confirmed = (
        None
        if dry_run
        else _dry_run_checked(
            workspace=workspace, dry_run_id=dry_run_id, fingerprint=fingerprint, text=bool(target.text)
        )
    )
    with _one_at_a_time(workspace.pk):
        record = ErasureRecord.objects.create(
            workspace=workspace,
            api_key=api_key,
            dry_run=dry_run,
            dry_run_of=confirmed,
            named=named,
            fingerprint=fingerprint,
        )
        run = ErasureRun(workspace_id=workspace.pk, target=target, dry_run=dry_run)
        step = ""
        try:
            for _, name, hook in [*ordered_finders(), *ordered_erasers()]:
                step = name
                hook(run)
        except Exception:
            log.error("erasure %s of workspace %s failed at %s", record.pk, workspace.pk, step, exc_info=True)
            _finish(record, run, ErasureState.FAILED, failed_at=step)
            raise
        if not dry_run:
            content_changed(workspace.pk)
        _finish(record, run, ErasureState.DONE)
    log.info("erasure %s of workspace %s: %s", record.pk, workspace.pk, "dry run" if dry_run else "done")
    return record


def _finish(record: ErasureRecord, run: ErasureRun, state: str, failed_at: str = "") -> None:
    record.places = {name: asdict(place) for name, place in sorted(run.places.items())}
    record.state = state
    record.failed_at = failed_at
    record.finished_at = timezone.now()
    record.save(update_fields=["places", "state", "failed_at", "finished_at"])
