"""The strategy forms: a new strategy (a layer, its text and scope, a starting helpfulness) and an edit of
one. Shapes are the form's; every rule is the items' validator (`strategy_errors` on creation,
`item_update_errors` on an edit), as for the API's `POST /api/v1/strategies/` and `PATCH /items/{id}/`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms

from apps.consumption.services import strategy_errors
from apps.core.errors import DomainError
from apps.layers.models import Item, Priority
from apps.layers.services import item_update_errors
from apps.web.forms.item import MAX_LIST, _words
from apps.web.layer_tree import LayerRow

EDITABLE = ("title", "content", "priority", "group_id", "agent_types", "source_refs")


class StrategyForm(forms.Form):
    title = forms.CharField(required=False, max_length=500)
    content = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4}), help_text="the approach that worked"
    )
    priority = forms.ChoiceField(required=False, choices=[("", "none"), *Priority.choices])
    group_id = forms.CharField(required=False, max_length=200, label="Task group")
    agent_types = forms.CharField(
        required=False, label="Agent types", help_text="comma-separated; empty: every agent type"
    )
    source_refs = forms.CharField(
        required=False, label="Source references", widget=forms.Textarea(attrs={"rows": 2}), help_text="one per line"
    )

    def _list(self, name: str, *, per_line: bool, longest: int) -> list[str]:
        text = self.cleaned_data.get(name, "")
        values = [line.strip() for line in text.splitlines() if line.strip()] if per_line else _words(text)
        if len(values) > MAX_LIST:
            raise forms.ValidationError(f"at most {MAX_LIST} entries")
        if any(len(value) > longest for value in values):
            raise forms.ValidationError(f"each entry is at most {longest} characters")
        return values

    def clean_agent_types(self) -> list[str]:
        return self._list("agent_types", per_line=False, longest=100)

    def clean_source_refs(self) -> list[str]:
        return self._list("source_refs", per_line=True, longest=1000)

    def fields_of(self) -> dict[str, Any]:
        """The parsed values by the service's names (a field with a shape error is left out)."""
        return {name: self.cleaned_data[name] for name in EDITABLE if name in self.cleaned_data}

    def show(self, errors: dict[str, DomainError]) -> None:
        for name, error in errors.items():
            field = name if name in self.fields else None
            if field is None or field not in self.errors:
                self.add_error(field, error.message)

    @staticmethod
    def initial_of(strategy: Item) -> dict[str, Any]:
        return {
            "title": strategy.title,
            "content": strategy.content,
            "priority": strategy.priority,
            "group_id": strategy.group_id,
            "agent_types": ", ".join(strategy.agent_types),
            "source_refs": "\n".join(strategy.source_refs),
        }


class StrategyNewForm(StrategyForm):
    """A new strategy: where it lives and how helpful it starts, then `strategy_errors` on every value."""

    layer = forms.TypedChoiceField(coerce=int, label="Layer", help_text="where agents find it")
    helpfulness = forms.FloatField(min_value=0.0, max_value=1.0, initial=0.5, help_text="0 to 1; feedback moves it")
    field_order = ["layer", "title", "content", "priority", "group_id", "agent_types", "source_refs", "helpfulness"]

    def __init__(self, *args: Any, layers: Sequence[LayerRow], **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "new-strategy-%s")
        super().__init__(*args, **kwargs)
        self.fields["layer"].choices = [(row.id, row.label) for row in layers]  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        self.show(strategy_errors(fields=self.fields_of(), helpfulness=data.get("helpfulness", 0.5)))
        return data


class StrategyEditForm(StrategyForm):
    def __init__(self, *args: Any, strategy: Item, **kwargs: Any) -> None:
        kwargs.setdefault("initial", self.initial_of(strategy))
        super().__init__(*args, **kwargs)
        self.strategy = strategy

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        self.show(item_update_errors(item=self.strategy, changes=self.fields_of()))
        return data
