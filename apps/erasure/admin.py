"""Admin for erasure receipts: read only (a receipt is the record of what was done)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from apps.erasure.models import ErasureRecord


@admin.register(ErasureRecord)
class ErasureRecordAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "dry_run", "state", "created_at", "finished_at"]
    list_filter = ["state", "dry_run", "workspace"]
    list_select_related = ["workspace"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
