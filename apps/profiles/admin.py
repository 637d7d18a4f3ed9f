"""Admin for agent profiles.

The form runs the same checks as the profile service, so a profile saved here never makes a
context request fail (an unknown weight, a budget above the window, a non-list of type filters).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.core.errors import InvalidInput
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput, check_name, profile_check

CONFIG_FIELDS = [f.name for f in fields(ProfileInput)]


class AgentProfileAdminForm(forms.ModelForm):
    class Meta:
        model = AgentProfile
        fields = ["workspace", "name", *CONFIG_FIELDS]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name, empty in (("type_filters", []), ("ranking_weights", {})):
            if name in data and data[name] is None:  # a cleared JSON box means "none"
                data[name] = empty
        try:
            if "name" in data:
                check_name(data["name"])
            profile_check(data=ProfileInput(**{k: data[k] for k in CONFIG_FIELDS if k in data}))
        except InvalidInput as exc:
            field = exc.code.removeprefix("invalid_")
            self.add_error(field if field in self.fields else None, exc.message)
        return data


@admin.register(AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    form = AgentProfileAdminForm
    list_display = ["name", "workspace", "agent_type", "model", "token_budget", "preferred_format", "updated_at"]
    list_filter = ["preferred_format", "workspace"]
    search_fields = ["name", "agent_type", "model"]
    list_select_related = ["workspace"]

    def get_readonly_fields(self, request: HttpRequest, obj: AgentProfile | None = None) -> list[str]:
        # A profile stays in its workspace (requests there name it); a copy is a new profile.
        # Its excluded items are set from the preview page, one at a time (profile_item_exclude).
        shown = ["excluded_items", "created_at", "updated_at"]
        return ["workspace", *shown] if obj else shown
