"""The redaction app's part of a workspace archive (apps/core/archive): the allow-list."""

from __future__ import annotations

from apps.core.archive.parts import model_part, register
from apps.redaction.models import AllowlistEntry


def register_parts() -> None:
    register(model_part(name="redaction_allowlist", order=120, model=AllowlistEntry, fields=("kind", "value", "note")))
