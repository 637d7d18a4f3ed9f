"""Assembly records written straight to the table, minutes ago, for the dashboard pages."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.assembly.models import AssemblyRecord
from apps.layers.services import layer_create
from tests.support.tenants import Tenant


def make_records(tenant: Tenant, count: int, *, minutes_ago: float, agent_types: int = 2) -> list[AssemblyRecord]:
    project = layer_create(
        workspace=tenant.workspace, kind="project", name=f"P{count}{minutes_ago}", parent=tenant.root
    )
    records = AssemblyRecord.objects.bulk_create(
        AssemblyRecord(
            workspace=tenant.workspace,
            layer=project,
            request={},
            model="gpt-4o",
            encoding="o200k_base",
            tokens_used=100,
            token_budget=200,
            items_included=2,
            elapsed_ms=float(10 + i % 10),
            assembly_cache_hit=i % 4 == 0,
            embedding_cache_hit=None if i % 4 == 0 else i % 2 == 0,
            overflow_count=i % 3,
            truncated_count=1 if i % 5 == 0 else 0,
            zone="green",
            agent_type=f"agent-{i % agent_types}",
            chunk_tokens=[["memory", project.pk, 60], ["spec", tenant.root.pk, 40]],
        )
        for i in range(count)
    )
    when = timezone.now() - timedelta(minutes=minutes_ago)
    AssemblyRecord.objects.filter(pk__in=[r.pk for r in records]).update(created_at=when)
    return records
