"""Admin for communities: read-only, since they are recomputed from the messages."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from apps.conversations.models import Community


@admin.register(Community)
class CommunityAdmin(admin.ModelAdmin):
    list_display = ["key", "kind", "layer", "title", "summary_tokens", "computed_at"]
    list_filter = ["kind"]
    search_fields = ["key", "title", "summary"]
    readonly_fields = [
        "workspace",
        "layer",
        "kind",
        "key",
        "title",
        "summary",
        "summary_tokens",
        "first_at",
        "last_at",
        "computed_at",
    ]
    exclude = ["members"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
