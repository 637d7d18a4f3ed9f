"""Admin for layer summaries."""

from __future__ import annotations

from django.contrib import admin

from apps.summaries.models import ProviderHealth, Summary, SummaryUsage


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


@admin.register(SummaryUsage)
class SummaryUsageAdmin(admin.ModelAdmin):
    list_display = ["workspace", "day", "calls", "prompt_tokens", "completion_tokens", "usd"]
    list_filter = ["workspace"]
    date_hierarchy = "day"


@admin.register(ProviderHealth)
class ProviderHealthAdmin(admin.ModelAdmin):
    list_display = ["workspace", "consecutive_failures", "last_failure_at"]
    readonly_fields = ["last_error"]
