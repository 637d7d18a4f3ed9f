"""Admin for assembly records: read-only, since they are the log of what was served."""

from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from apps.assembly.models import AssemblyRecord


@admin.register(AssemblyRecord)
class AssemblyRecordAdmin(admin.ModelAdmin):
    list_display = [
        "trace_id",
        "workspace",
        "layer",
        "model",
        "tokens_used",
        "token_budget",
        "items_included",
        "elapsed_ms",
        "assembly_cache_hit",
        "created_at",
    ]
    list_filter = ["assembly_cache_hit", "embedding_cache_hit", "sampled", "model", "workspace"]
    search_fields = ["=trace_id", "layer__name"]
    list_select_related = ["workspace", "layer"]
    date_hierarchy = "created_at"
    exclude = ["request", "trace"]
    readonly_fields = [
        "trace_id",
        "workspace",
        "layer",
        "api_key",
        "model",
        "encoding",
        "tokens_used",
        "token_budget",
        "items_included",
        "candidates_considered",
        "overflow_count",
        "truncated_count",
        "elapsed_ms",
        "assembly_cache_hit",
        "embedding_cache_hit",
        "timings",
        "warnings",
        "sampled",
        "created_at",
        "request_pretty",
        "trace_pretty",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AssemblyRecord]:
        queryset = super().get_queryset(request)
        # The changelist never needs the JSON columns; the change page reads them per object.
        match = request.resolver_match
        if match and match.url_name and match.url_name.endswith("_changelist"):
            queryset = queryset.defer("request", "trace")
        return queryset

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: AssemblyRecord | None = None) -> bool:
        return False

    @admin.display(description="Request")
    def request_pretty(self, obj: AssemblyRecord) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.request, indent=2, sort_keys=True, ensure_ascii=False))

    @admin.display(description="Decision trace")
    def trace_pretty(self, obj: AssemblyRecord) -> str:
        return format_html("<pre>{}</pre>", json.dumps(obj.trace, indent=2, ensure_ascii=False))
