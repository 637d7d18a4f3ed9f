"""Admin for error patterns (their excerpts are stored redacted)."""

from __future__ import annotations

from django.contrib import admin

from apps.error_patterns.models import ErrorPattern


@admin.register(ErrorPattern)
class ErrorPatternAdmin(admin.ModelAdmin):
    list_display = ["short_signature", "workspace", "occurrences", "confidence", "last_seen"]
    list_filter = ["workspace"]
    search_fields = ["signature", "solution"]
    readonly_fields = ["first_seen", "last_seen", "occurrences"]
    list_select_related = ["workspace"]
    date_hierarchy = "last_seen"

    @admin.display(description="Signature", ordering="signature")
    def short_signature(self, obj: ErrorPattern) -> str:
        return obj.signature[:100]
