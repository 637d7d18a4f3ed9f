"""Admin for attempts and error patterns (their texts are stored redacted)."""

from __future__ import annotations

from django.contrib import admin

from apps.error_patterns.models import Attempt, ErrorPattern, HintInjection


@admin.register(ErrorPattern)
class ErrorPatternAdmin(admin.ModelAdmin):
    list_display = ["short_signature", "workspace", "occurrences", "failures", "confidence", "last_seen"]
    list_filter = ["workspace"]
    search_fields = ["signature", "solution"]
    readonly_fields = ["first_seen", "last_seen", "occurrences", "failures"]
    list_select_related = ["workspace"]
    date_hierarchy = "last_seen"

    @admin.display(description="Signature", ordering="signature")
    def short_signature(self, obj: ErrorPattern) -> str:
        return obj.signature[:100]


@admin.register(Attempt)
class AttemptAdmin(admin.ModelAdmin):
    list_display = ["id", "workspace", "layer", "agent_type", "group_id", "iteration", "outcome", "created_at"]
    list_filter = ["outcome", "workspace"]
    search_fields = ["group_id", "agent_type", "signature"]
    list_select_related = ["workspace", "layer"]
    raw_id_fields = ["layer", "pattern"]


@admin.register(HintInjection)
class HintInjectionAdmin(admin.ModelAdmin):
    list_display = ["id", "pattern", "layer", "agent_type", "group_id", "created_at", "resolved_at"]
    list_select_related = ["pattern", "layer"]
    raw_id_fields = ["pattern", "layer"]
