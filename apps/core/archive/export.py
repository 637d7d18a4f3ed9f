"""Writing a workspace's archive: every part's rows from one consistent snapshot, then the manifest."""

from __future__ import annotations

import hashlib
import zipfile
from datetime import UTC, datetime
from typing import IO, Any

import orjson
from django.db import connection, transaction

from apps.core.archive.manifest import FORMAT, MANIFEST, VERSION
from apps.core.archive.parts import ExportScope, archive_parts, member_name
from apps.core.archive.progress import NoProgress, Progress
from apps.core.backup import applied_migrations

FLUSH_BYTES = 1 << 20
DUMPS_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_UTC_Z


def archive_export(
    *,
    workspace_id: int,
    source: dict[str, Any],
    out: IO[bytes],
    embeddings: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write the workspace's archive to `out` (a seekable binary file); the manifest written.

    Read in one REPEATABLE READ transaction (when not inside one already), so the members agree with
    each other whatever is written meanwhile: no relationship to an item the archive lacks.
    """
    progress = progress or NoProgress()
    scope = ExportScope(workspace_id=workspace_id, embeddings=embeddings)
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:  # SET TRANSACTION must be a transaction's first statement (not so in a test's)
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        parts = archive_parts()
        progress.start(sum(part.count(scope) for part in parts))
        members: dict[str, dict[str, Any]] = {}
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for part in parts:
                members[member_name(part)] = _write_member(archive, member_name(part), part.export(scope), progress)
            manifest = {
                "format": FORMAT,
                "format_version": VERSION,
                "created_at": datetime.now(UTC).isoformat(),
                "app_version": {"migrations": applied_migrations()},
                "workspace": source,
                "embeddings": embeddings,
                "members": members,
            }
            archive.writestr(MANIFEST, orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return manifest


def _write_member(archive: zipfile.ZipFile, name: str, rows: Any, progress: Progress) -> dict[str, Any]:
    digest, size, count, reported = hashlib.sha256(), 0, 0, 0
    buffer = bytearray()
    with archive.open(name, "w", force_zip64=True) as member:
        for row in rows:
            buffer += orjson.dumps(row, option=DUMPS_OPTIONS)
            buffer += b"\n"
            count += 1
            if len(buffer) >= FLUSH_BYTES:
                digest.update(buffer)
                size += len(buffer)
                member.write(buffer)
                buffer.clear()
                progress.advance(count - reported)
                reported = count
        digest.update(buffer)
        size += len(buffer)
        member.write(buffer)
    progress.advance(count - reported)
    return {"rows": count, "bytes": size, "sha256": digest.hexdigest()}
