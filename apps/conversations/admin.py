"""Admin for communities and access counts: read-only, since they are recomputed from the messages
and counted by serving items."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from apps.conversations.models import Community, ItemAccess


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


@admin.register(ItemAccess)
class ItemAccessAdmin(admin.ModelAdmin):
    """Read-only: access counts come from serving items (apps/conversations/access.py)."""

    list_display = ["item", "access_count", "last_accessed_at"]
    ordering = ["-last_accessed_at"]
    raw_id_fields = ["item"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ItemAccess]:
        return super().get_queryset(request).select_related("item").defer("item__embedding", "item__search_vector")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ItemAccess | None = None) -> bool:
        return False
