"""Admin for layer summaries."""

from __future__ import annotations

from django.contrib import admin

from apps.summaries.models import Summary


@admin.register(Summary)
class SummaryAdmin(admin.ModelAdmin):
    list_display = [
        "layer",
        "depth",
        "workspace",
        "token_count",
        "provider",
        "stale",
        "personalized_for",
        "generated_at",
    ]
    list_filter = ["depth", "stale", "provider", "workspace"]
    search_fields = ["text", "layer__name"]
    raw_id_fields = ["layer", "personalized_for"]
    readonly_fields = ["token_count", "source_hash", "generated_at"]
    list_select_related = ["layer", "workspace", "personalized_for"]
