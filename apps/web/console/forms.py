"""The console list's filters: every field optional, every value checked (bad input is a form error)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django import forms
from django.utils import timezone

from apps.assembly.models import RecordOrigin
from apps.assembly.selectors import RecordFilters
from apps.engine.policy import ZONES

ANY_YES_NO = [("", "Any"), ("yes", "Yes"), ("no", "No")]
RANGES = {"1h": timedelta(hours=1), "24h": timedelta(days=1), "7d": timedelta(days=7), "30d": timedelta(days=30)}


class RecordFilterForm(forms.Form):
    """Search (a trace id or words of the query), layer, API key, agent type, origin (agent or page),
    tag, cached, partial, zone, time."""

    q = forms.CharField(required=False, max_length=200, label="Trace id (or its first characters) or query text")
    layer = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Layer")
    api_key = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="API key")
    agent_type = forms.ChoiceField(required=False, label="Agent type")
    origin = forms.ChoiceField(
        required=False, choices=[("", "Any"), *RecordOrigin.choices], label="Asked by (agent or page run)"
    )
    tag = forms.ChoiceField(required=False, label="Tag")
    cached = forms.ChoiceField(required=False, choices=ANY_YES_NO, label="From the cache")
    partial = forms.ChoiceField(required=False, choices=ANY_YES_NO, label="Partial")
    zone = forms.ChoiceField(required=False, choices=[("", "Any"), *((z, z.replace("_", " ")) for z in ZONES)])
    range = forms.ChoiceField(
        required=False,
        choices=[
            ("", "Any time"),
            ("1h", "Last hour"),
            ("24h", "Last 24 h"),
            ("7d", "Last 7 days"),
            ("30d", "Last 30 days"),
        ],
        label="Time",
    )
    since = forms.DateTimeField(
        required=False, label="From", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )
    until = forms.DateTimeField(
        required=False, label="Until", widget=forms.DateTimeInput(attrs={"type": "datetime-local"})
    )

    def __init__(
        self,
        *args: Any,
        layers: Sequence[tuple[int, str]],
        api_keys: Sequence[tuple[int, str]],
        agent_types: Sequence[str],
        tags: Sequence[str] = (),
        tagged: Callable[[str], tuple[str, ...]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.tagged = tagged
        self._choices("tag", [("", "Any"), *((tag, tag) for tag in tags)])
        self._choices("layer", [("", "Any layer"), *layers])
        self._choices("api_key", [("", "Any key"), *api_keys])
        self._choices("agent_type", [("", "Any"), *((name, name) for name in agent_types)])

    def _choices(self, name: str, choices: list[tuple[Any, str]]) -> None:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        field.choices = choices

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "must be after From")
        return data

    def filters(self, *, now: datetime | None = None) -> RecordFilters:
        """The valid form as RecordFilters (call after `is_valid()`); a range preset sets From; a tag
        becomes the trace ids that carry it (`tagged`)."""
        data = self.cleaned_data
        since = data.get("since")
        if data.get("range") in RANGES:
            since = (now or timezone.now()) - RANGES[data["range"]]
        return RecordFilters(
            layer_id=data.get("layer"),
            api_key_id=data.get("api_key"),
            agent_type=data.get("agent_type") or "",
            origin=data.get("origin") or "",
            cached={"yes": True, "no": False}.get(data.get("cached") or ""),
            partial={"yes": True, "no": False}.get(data.get("partial") or ""),
            zone=data.get("zone") or "",
            since=since,
            until=data.get("until"),
            search=(data.get("q") or "").strip(),
            trace_ids=self.tagged(data["tag"]) if data.get("tag") and self.tagged else None,
        )
