"""Admin for agent profiles."""

from __future__ import annotations

from django.contrib import admin

from apps.profiles.models import AgentProfile


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "agent_type", "model", "token_budget", "preferred_format", "updated_at"]
    list_filter = ["preferred_format", "workspace"]
    search_fields = ["name", "agent_type", "model"]
    readonly_fields = ["created_at", "updated_at"]
    list_select_related = ["workspace"]
