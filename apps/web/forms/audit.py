"""The audit page's filters: kind of thing, actor, action, a date range and text; every field optional."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from django import forms
from django.utils import timezone

from apps.workspaces.models import AuditTarget
from apps.workspaces.selectors import AuditFilters

ACTIONS = ("create", "update", "delete", "revoke")


class AuditFilterForm(forms.Form):
    """Bad input is a form error and the list stays unfiltered; dates are whole UTC days, both included."""

    kind = forms.ChoiceField(required=False, choices=[("", "Any kind"), *AuditTarget.choices], label="Kind")
    actor = forms.CharField(
        required=False,
        max_length=200,
        label="Actor",
        help_text="A username or key <name>, or their start",
        widget=forms.TextInput(attrs={"list": "audit-actors", "autocomplete": "off"}),
    )
    action = forms.ChoiceField(required=False, choices=[("", "Any action"), *((a, a) for a in ACTIONS)], label="Action")
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="Until", widget=forms.DateInput(attrs={"type": "date"}))
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Text",
        help_text="In the object's name or id, or in an old or new value",
        widget=forms.TextInput(attrs={"type": "search"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", "must not be before From")
        return data

    def filters(self) -> AuditFilters:
        """The valid form's filters (call after `is_valid()`)."""
        data = self.cleaned_data
        return AuditFilters(
            target_kind=data.get("kind") or "",
            actor=(data.get("actor") or "").strip(),
            action=data.get("action") or "",
            since=_day_start(data.get("since")),
            until=_day_start(data["until"] + timedelta(days=1)) if data.get("until") else None,
            text=(data.get("q") or "").strip(),
        )

    def set_count(self) -> int:
        """How many filters the valid form sets (shown beside the list)."""
        return sum(1 for value in self.cleaned_data.values() if value not in (None, ""))


def _day_start(day: Any) -> datetime | None:
    return None if day is None else datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())
