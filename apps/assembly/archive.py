"""The assembly app's part of a workspace archive (apps/core/archive): output templates.

Assembly records, their traces and rollups are not archived: they describe requests served by
the source instance (the dashboard's history), not what a context is assembled from.
"""

from __future__ import annotations

from apps.assembly.models import OutputTemplate
from apps.core.archive.parts import model_part, register


def register_parts() -> None:
    register(model_part(name="templates", order=110, model=OutputTemplate, fields=("name", "body", "by_type")))
