"""A new workspace: name and slug, checked by `workspaces.services.workspace_errors` (the service's own rules)."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.workspaces.services import workspace_errors


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown in the pages, e.g. Acme Corp")
    slug = forms.CharField(
        max_length=64, help_text="Letters, digits, - and _; agents' keys belong to it, it cannot change later"
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        for name, error in workspace_errors(slug=data.get("slug", ""), name=data.get("name", "")).items():
            if name not in self.errors:
                self.add_error(name, error.message)
        return data
