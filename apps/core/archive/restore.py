"""Restoring an archive into an empty workspace: all of it in one transaction, or nothing.

Checked before anything is written: the zip, the manifest (format, version, members) and every
member's SHA-256, size and rows. Then, in one transaction holding the workspace's archive lock,
each part must find the workspace empty of its rows (else 409 `workspace_not_empty`) and restores
its member; a row it cannot write is a 400 `archive_invalid` and the transaction rolls back.
"""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

import orjson
from django.core.exceptions import ValidationError
from django.db import DataError, IntegrityError, connection, transaction

from apps.core.archive.errors import ArchiveDamaged, ArchiveInvalid, WorkspaceNotEmpty
from apps.core.archive.manifest import archive_open, manifest_read, manifest_total_rows, members_verify
from apps.core.archive.parts import IdMap, RestoreScope, RowError, archive_parts, member_name
from apps.core.archive.progress import NoProgress, Progress
from apps.core.embeddings import model_label
from apps.core.versions import content_changed

MAX_ROW_BYTES = 64 << 20  # one JSON line; an item with its vector is a few kB
LOCK_NAMESPACE = 0x61726368  # "arch": pg_advisory_xact_lock(namespace, workspace id)
# What a row the tables refuse raises: a wrong type or value, a constraint.
ROW_ERRORS = (RowError, KeyError, TypeError, ValueError, AttributeError, ValidationError, IntegrityError, DataError)


@dataclass(frozen=True)
class Restored:
    source: dict[str, Any]  # the source workspace as the manifest names it
    rows: dict[str, int]  # rows written per part


def archive_restore(*, workspace_id: int, source: IO[bytes], progress: Progress | None = None) -> Restored:
    """Restore the archive in `source` (a seekable binary file) into the workspace; see the module."""
    progress = progress or NoProgress()
    archive = archive_open(source)
    manifest = manifest_read(archive)
    members_verify(archive, manifest)
    scope = RestoreScope(
        workspace_id=workspace_id,
        ids=IdMap(),
        embeddings=bool(manifest.get("embeddings")),
        embedding_model=model_label(),
    )
    written: dict[str, int] = {}
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_NAMESPACE, workspace_id])
        parts = archive_parts()
        occupied = [part.name for part in parts if part.occupied(workspace_id)]
        if occupied:
            raise WorkspaceNotEmpty(
                f"the workspace already holds {', '.join(occupied)}: an archive is restored into an empty workspace",
                details={"parts": occupied},
            )
        progress.start(manifest_total_rows(manifest))
        for part in parts:
            name = member_name(part)
            reader = _Rows(archive, name, progress)
            try:
                written[part.name] = part.restore(scope, iter(reader))
            except ROW_ERRORS as exc:
                raise ArchiveInvalid(
                    f"{name}, row {reader.number}: {_reason(exc)}", details={"member": name, "row": reader.number}
                ) from exc
        content_changed(workspace_id)
    return Restored(source=manifest.get("workspace") or {}, rows=written)


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"the field {exc.args[0]!r} is missing"
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


class _Rows:
    """A member's rows, decoded one JSON line at a time; `number` is the row last read (1-based)."""

    def __init__(self, archive: zipfile.ZipFile, name: str, progress: Progress) -> None:
        self.archive, self.name, self.progress, self.number = archive, name, progress, 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        try:
            with self.archive.open(self.name) as member:
                while line := member.readline(MAX_ROW_BYTES + 1):
                    if len(line) > MAX_ROW_BYTES or not line.endswith(b"\n"):
                        raise ArchiveDamaged(f"{self.name}: row {self.number + 1} is cut or too long")
                    self.number += 1
                    row = orjson.loads(line)
                    if not isinstance(row, dict):
                        raise RowError("a row is a JSON object")
                    yield row
                    if self.number % 1000 == 0:
                        self.progress.advance(1000)
        except orjson.JSONDecodeError as exc:
            raise ArchiveInvalid(f"{self.name}, row {self.number}: not JSON ({exc})") from exc
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
            raise ArchiveDamaged(f"member {self.name} cannot be read: {exc}") from exc
        self.progress.advance(self.number % 1000)
