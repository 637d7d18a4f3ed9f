"""Reads of erasure receipts."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.core.errors import NotFound
from apps.erasure.errors import ERASURE_NOT_FOUND
from apps.erasure.models import ErasureRecord
from apps.workspaces.models import Workspace


def erasures_list(*, workspace: Workspace) -> QuerySet[ErasureRecord]:
    """The workspace's receipts, newest first."""
    return ErasureRecord.objects.filter(workspace=workspace).select_related("api_key").order_by("-created_at", "-id")


def erasure_get(*, workspace: Workspace, erasure_id: int) -> ErasureRecord:
    found = ErasureRecord.objects.filter(workspace=workspace, pk=erasure_id).select_related("api_key").first()
    if found is None:
        raise NotFound("erasure not found", code=ERASURE_NOT_FOUND)
    return found
