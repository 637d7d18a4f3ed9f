"""Admin for layer summaries and layer summary configurations.

A configuration is checked by `config_errors` and saved by `config_update`, the API's own
validator and service: a company layer cannot be made personalized here either.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from apps.summaries.config import EDITABLE, config_errors, config_update
from apps.summaries.models import LayerConfig, ProviderHealth, Summary, SummaryUsage


class LayerConfigAdminForm(forms.ModelForm):
    class Meta:
        model = LayerConfig
        fields = list(EDITABLE)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        changes = {name: data[name] for name in EDITABLE if name in data}
        for name, message in config_errors(layer=self.instance.layer, changes=changes).items():
            self.add_error(None if name == "__all__" else name, message)
        return data

    def _post_clean(self) -> None:
        """The model's own clean() would repeat the errors above; config_errors already ran it."""


@admin.register(LayerConfig)
class LayerConfigAdmin(admin.ModelAdmin):
    form = LayerConfigAdminForm
    list_display = [
        "layer",
        "update_interval_seconds",
        "update_on_changes",
        "personalization",
        "skip_if_unchanged",
        "changes_since_summary",
        "last_summarized_at",
    ]
    list_filter = ["personalization", "skip_if_unchanged", "layer__kind"]
    search_fields = ["layer__name"]
    list_select_related = ["layer"]
    readonly_fields = ["layer", "changes_since_summary", "last_summarized_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # every layer gets its config when it is created

    def save_model(self, request: HttpRequest, obj: LayerConfig, form: forms.ModelForm, change: bool) -> None:
        config_update(layer=obj.layer, changes={name: form.cleaned_data[name] for name in form.changed_data})


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
