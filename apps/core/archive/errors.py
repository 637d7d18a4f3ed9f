"""The archive's error codes: a client branches on them (400 for the archive, 409 for the workspace)."""

from __future__ import annotations

from apps.core import errors
from apps.core.errors import Conflict, InvalidInput


class ArchiveDamaged(InvalidInput):
    """Not a readable zip, truncated, a member whose bytes or rows differ from the manifest."""

    code = errors.ARCHIVE_DAMAGED.code


class ArchiveFormatUnknown(InvalidInput):
    """Not a workspace archive, or one of a format version this service does not read."""

    code = errors.ARCHIVE_FORMAT_UNKNOWN.code


class ArchiveMemberMissing(InvalidInput):
    """A member the format requires (or the manifest names) is not in the zip."""

    code = errors.ARCHIVE_MEMBER_MISSING.code


class ArchiveInvalid(InvalidInput):
    """Intact, but a row cannot be restored (an unknown reference, a value the tables refuse)."""

    code = errors.ARCHIVE_INVALID.code


class WorkspaceNotEmpty(Conflict):
    """An archive is restored only into a workspace that holds nothing yet but its company root."""

    code = errors.WORKSPACE_NOT_EMPTY.code
