"""Tags and a note on a trace (Langfuse-style annotations), kept per trace of a workspace.

Developers and admins write them on the trace page; the console's list shows the tags and filters by
one. The one validator is `trace_note_errors`; an erasure rewrites a note that holds the erased text.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q

from apps.core.erasure import RECORDS, ErasureRun, eraser, scrub
from apps.core.errors import DomainError, InvalidInput
from apps.core.field_errors import INVALID_NOTE
from apps.web.errors import INVALID_TAGS
from apps.web.models import TraceNote
from apps.workspaces.models import Workspace

TAG_PATTERN = r"[a-z0-9][a-z0-9_.:-]{0,49}"
MAX_TAGS = 20
MAX_NOTE_CHARS = 5000


def tags_parse(text: str) -> list[str]:
    """ "Regression, needs-pin  regression" → ["needs-pin", "regression"]: lower case, unique, sorted."""
    return sorted({part.strip().lower() for part in re.split(r"[,\s]+", text) if part.strip()})


def trace_note_errors(*, tags: list[str], note: str) -> dict[str, DomainError]:
    """Every reason these tags and note cannot be kept, by field ({} when fine)."""
    errors: dict[str, DomainError] = {}
    bad = [tag for tag in tags if not re.fullmatch(TAG_PATTERN, tag)]
    if bad:
        errors["tags"] = InvalidInput(
            f"a tag is 1-50 characters of a-z 0-9 _ . : - (starting with a letter or digit): {', '.join(bad[:3])}",
            code=INVALID_TAGS,
        )
    elif len(tags) > MAX_TAGS:
        errors["tags"] = InvalidInput(f"at most {MAX_TAGS} tags", code=INVALID_TAGS)
    if len(note) > MAX_NOTE_CHARS:
        errors["note"] = InvalidInput(f"a note is at most {MAX_NOTE_CHARS} characters", code=INVALID_NOTE)
    return errors


def trace_note_get(*, workspace: Workspace, trace_id: uuid.UUID | str) -> TraceNote | None:
    return TraceNote.objects.filter(workspace=workspace, trace_id=trace_id).first()


def trace_note_save(
    *,
    workspace: Workspace,
    trace_id: uuid.UUID,
    tags: list[str],
    note: str,
    user: AbstractBaseUser | AnonymousUser | None,
) -> TraceNote | None:
    """Keep the trace's tags and note (None and nothing kept when both are empty: the note is removed)."""
    errors = trace_note_errors(tags=tags, note=note)
    if errors:
        raise next(iter(errors.values()))
    if not tags and not note.strip():
        TraceNote.objects.filter(workspace=workspace, trace_id=trace_id).delete()
        return None
    by = user if isinstance(user, AbstractBaseUser) else None
    saved, _ = TraceNote.objects.update_or_create(
        workspace=workspace, trace_id=trace_id, defaults={"tags": tags, "note": note, "updated_by": by}
    )
    return saved


def tags_by_trace(*, workspace: Workspace, trace_ids: Iterable[uuid.UUID | str]) -> dict[str, list[str]]:
    """The tags of these traces, by trace id as a string (one query)."""
    rows = TraceNote.objects.filter(workspace=workspace, trace_id__in=list(trace_ids)).values_list("trace_id", "tags")
    return {str(trace_id): list(tags) for trace_id, tags in rows if tags}


def tags_in_use(*, workspace: Workspace) -> list[str]:
    """Every tag of the workspace's traces, sorted (for the console's filter)."""
    rows = TraceNote.objects.filter(workspace=workspace).exclude(tags=[]).values_list("tags", flat=True)
    return sorted({tag for tags in rows for tag in tags})


def traces_tagged(*, workspace: Workspace, tag: str) -> tuple[str, ...]:
    """The trace ids of the workspace that carry `tag`."""
    rows = TraceNote.objects.filter(workspace=workspace, tags__contains=[tag]).values_list("trace_id", flat=True)
    return tuple(str(trace_id) for trace_id in rows)


def _erase(run: ErasureRun) -> None:
    """A note or tag that holds the erased text has it replaced by the marker (tags: the tag goes)."""
    text = run.target.text
    if not text:
        run.count("trace_notes")
        return
    rows = list(
        TraceNote.objects.filter(workspace_id=run.workspace_id).filter(
            Q(note__icontains=text) | Q(tags__icontains=text)
        )
    )
    run.count("trace_notes", found=len(rows))
    if run.dry_run:
        return
    for row in rows:
        row.note = scrub(row.note, text)
        row.tags = [tag for tag in row.tags if text.casefold() not in tag.casefold()]
        row.save(update_fields=["note", "tags"])
    run.count("trace_notes", rewritten=len(rows))


def register() -> None:
    eraser(RECORDS, "trace_notes", _erase)
