"""The archive's manifest and its checks: format and version, every member present and intact."""

from __future__ import annotations

import hashlib
import zipfile
import zlib
from typing import Any

import orjson

from apps.core.archive.errors import ArchiveDamaged, ArchiveFormatUnknown, ArchiveMemberMissing
from apps.core.archive.parts import archive_parts, member_name

FORMAT = "contextarch.workspace"
VERSION = 1
MANIFEST = "manifest.json"
CHUNK = 1 << 20
# Errors reading a zip that was cut short or altered: the zip's own, inflate's, a short read.
READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError)


def archive_open(source: Any) -> zipfile.ZipFile:
    """The zip, or ArchiveDamaged (not a zip, or its directory cut off: a truncated download)."""
    try:
        return zipfile.ZipFile(source)
    except READ_ERRORS as exc:
        raise ArchiveDamaged(f"not a readable zip archive: {exc}") from exc


def manifest_read(archive: zipfile.ZipFile) -> dict[str, Any]:
    """The manifest, checked: this format and version, every registered part among its members, every
    member it names in the zip and no member it does not name."""
    names = set(archive.namelist())
    if MANIFEST not in names:
        raise ArchiveFormatUnknown(f"no {MANIFEST}: not a workspace archive")
    try:
        manifest = orjson.loads(archive.read(MANIFEST))
    except (orjson.JSONDecodeError, *READ_ERRORS) as exc:
        raise ArchiveDamaged(f"{MANIFEST} cannot be read: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ArchiveFormatUnknown(f"not a workspace archive (format is not {FORMAT!r})")
    if manifest.get("format_version") != VERSION:
        raise ArchiveFormatUnknown(
            f"format version {manifest.get('format_version')!r}; this service reads version {VERSION}",
            details={"format_version": manifest.get("format_version"), "supported": [VERSION]},
        )
    members = manifest.get("members")
    if not isinstance(members, dict) or not all(isinstance(m, dict) for m in members.values()):
        raise ArchiveDamaged(f"{MANIFEST} lists no members")
    required = [member_name(part) for part in archive_parts()]
    unknown = sorted(set(members) - set(required))
    if unknown:
        raise ArchiveFormatUnknown(f"unknown member {unknown[0]}", details={"members": unknown})
    missing = [name for name in required if name not in members or name not in names]
    if missing:
        raise ArchiveMemberMissing(f"member {missing[0]} is missing", details={"members": missing})
    extra = sorted(names - set(required) - {MANIFEST})
    if extra:
        raise ArchiveDamaged(f"member {extra[0]} is not in the manifest", details={"members": extra})
    return manifest


def members_verify(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> None:
    """Every member's bytes against the manifest's SHA-256, size and row count (one pass each)."""
    for name, expected in manifest["members"].items():
        digest, size, rows = hashlib.sha256(), 0, 0
        try:
            with archive.open(name) as member:
                while chunk := member.read(CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
                    rows += chunk.count(b"\n")
        except READ_ERRORS as exc:
            raise ArchiveDamaged(f"member {name} cannot be read: {exc}", details={"member": name}) from exc
        found = {"sha256": digest.hexdigest(), "bytes": size, "rows": rows}
        wrong = [key for key, value in found.items() if expected.get(key) != value]
        if wrong:
            raise ArchiveDamaged(
                f"member {name}: its {wrong[0]} does not match the manifest",
                details={"member": name, "mismatch": wrong},
            )


def manifest_total_rows(manifest: dict[str, Any]) -> int:
    return sum(int(m.get("rows", 0)) for m in manifest["members"].values())
