"""Admin for the redaction allow-list."""

from __future__ import annotations

from django.contrib import admin

from apps.redaction.models import AllowlistEntry


@admin.register(AllowlistEntry)
class AllowlistEntryAdmin(admin.ModelAdmin):
    list_display = ["value", "kind", "workspace", "note", "created_at"]
    list_filter = ["kind", "workspace"]
    search_fields = ["value", "note"]
    list_select_related = ["workspace"]
