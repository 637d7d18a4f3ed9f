"""Forms of the layer page: its summary configuration in human units, a new item, a child layer."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.layers.models import KIND_RANK, ItemKind, Layer, LayerKind
from apps.layers.services import ItemInput, item_errors
from apps.summaries.config import SummaryConfig, config_errors
from apps.summaries.models import Personalization

UNITS = {"minutes": 60, "hours": 3600, "days": 86400}


def human_interval(seconds: int) -> tuple[int, str]:
    """3600 → (1, "hours"); 172800 → (2, "days"); anything else in whole minutes (rounded)."""
    for unit in ("days", "hours"):
        if seconds % UNITS[unit] == 0:
            return seconds // UNITS[unit], unit
    return max(1, round(seconds / 60)), "minutes"


class LayerConfigForm(forms.Form):
    """The layer's summary triggers. Checked by `config_errors`, the API's own validator, so every
    error shows at once, each beside its field."""

    interval = forms.IntegerField(label="Regenerate every", min_value=1)
    interval_unit = forms.ChoiceField(label="Unit", choices=[(u, u) for u in UNITS])
    update_on_changes = forms.IntegerField(label="…or after this many changes")
    personalization = forms.ChoiceField(choices=Personalization.choices)
    skip_if_unchanged = forms.BooleanField(required=False, label="Skip when the content is unchanged")

    def __init__(self, *args: Any, layer: Layer, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.layer = layer

    @classmethod
    def initial_of(cls, config: SummaryConfig) -> dict[str, Any]:
        value, unit = human_interval(config.update_interval_seconds)
        return {
            "interval": value,
            "interval_unit": unit,
            "update_on_changes": config.update_on_changes,
            "personalization": config.personalization,
            "skip_if_unchanged": config.skip_if_unchanged,
        }

    def changes(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "update_interval_seconds": data["interval"] * UNITS[data["interval_unit"]],
            "update_on_changes": data["update_on_changes"],
            "personalization": data["personalization"],
            "skip_if_unchanged": data["skip_if_unchanged"],
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # What parsed is checked even when another field did not, so every error shows at once.
        changes = {
            name: data[name] for name in ("update_on_changes", "personalization", "skip_if_unchanged") if name in data
        }
        if "interval" in data and "interval_unit" in data:
            changes["update_interval_seconds"] = data["interval"] * UNITS[data["interval_unit"]]
        fields = {"update_interval_seconds": "interval"}
        for name, message in config_errors(layer=self.layer, changes=changes).items():
            field = fields.get(name, name)
            if field in self.errors:
                continue
            if name == "update_interval_seconds":
                message = "must be between 1 minute and 7 days"
            self.add_error(field if field in self.fields else None, message)
        return data


class ItemForm(forms.Form):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "new-item-%s")  # ids unique on the layer page, which has several forms
        super().__init__(*args, **kwargs)

    kind = forms.ChoiceField(choices=ItemKind.choices)
    type = forms.CharField(required=False, max_length=32, help_text="e.g. fact, decision, requirement")
    title = forms.CharField(required=False, max_length=500)
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3}))
    pinned = forms.BooleanField(required=False, label="Pinned (always sent)")

    def item_input(self) -> ItemInput:
        data = self.cleaned_data
        return ItemInput(
            kind=data["kind"],
            type=data.get("type", ""),
            title=data.get("title", ""),
            content=data.get("content", ""),
            pinned=data.get("pinned", False),
            role="user" if data["kind"] == ItemKind.MESSAGE else "",  # a message added here is the operator's
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "kind" not in data:
            return data
        # The item service's own validator, every reason at once (the API gives the first).
        for name, error in item_errors(self.item_input()).items():
            if name not in self.errors:
                self.add_error(name if name in self.fields else None, error.message)
        return data


def child_kinds(parent: Layer) -> list[tuple[str, str]]:
    """The kinds a layer under `parent` may have: lower in the hierarchy (layers.services._check_parent)."""
    return [(value, label) for value, label in LayerKind.choices if KIND_RANK[value] > KIND_RANK[parent.kind]]


class ChildLayerForm(forms.Form):
    """A sub-layer of `parent`, offering only the kinds that may sit under it (an org under a session
    would only earn an error)."""

    def __init__(self, *args: Any, parent: Layer, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "child-%s")  # ids unique on the layer page, which has several forms
        super().__init__(*args, **kwargs)
        kind = self.fields["kind"]
        assert isinstance(kind, forms.ChoiceField)
        kind.choices = child_kinds(parent)

    kind = forms.ChoiceField(choices=[])
    name = forms.CharField(max_length=200)
    external_id = forms.CharField(required=False, max_length=200, label="External id")


class LayerEditForm(forms.Form):
    """Rename a layer or change its external id (what `layer_update` takes; the kind never changes)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "layer-%s")  # ids unique on the layer page, which has several forms
        super().__init__(*args, **kwargs)

    name = forms.CharField(max_length=200)
    external_id = forms.CharField(
        required=False, max_length=200, label="External id", help_text="how agents name it (unique per kind)"
    )
