"""The one write of an assembly record after its insert: the agent's report of the packages it used."""

from __future__ import annotations

from datetime import datetime

from apps.assembly.models import AssemblyRecord


def record_consumption_claim(*, record_id: int, used: list[int], at: datetime) -> bool:
    """Store `used` as the record's used packages, reported at `at`, unless a report is stored already
    (one conditional UPDATE: of two concurrent reports one wins). True: this one was stored."""
    return bool(
        AssemblyRecord.objects.filter(pk=record_id, used_packages__isnull=True).update(
            used_packages=used, consumption_reported_at=at
        )
    )
