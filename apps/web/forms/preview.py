"""The context preview form: what a person may ask the assembly service from the preview page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from apps.assembly.params import ContextParams
from apps.layers.models import ItemKind
from apps.profiles.models import OutputFormat
from apps.web.layer_tree import LayerRow


def _default_budget() -> int:
    return int(settings.DEFAULT_TOKEN_BUDGET)


def _default_model() -> str:
    return str(settings.DEFAULT_MODEL)


class PreviewForm(forms.Form):
    """Layer, query, budget, format, model and kinds; `params()` turns it into ContextParams."""

    layer = forms.TypedChoiceField(coerce=int, label="Layer")
    query = forms.CharField(
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "What is the agent about to do?"}),
    )
    token_budget = forms.IntegerField(initial=_default_budget, label="Token budget")
    format = forms.ChoiceField(choices=OutputFormat.choices, initial=OutputFormat.MARKDOWN)
    model = forms.CharField(required=False, max_length=100, initial=_default_model)
    kinds = forms.MultipleChoiceField(
        choices=ItemKind.choices, required=False, widget=forms.CheckboxSelectMultiple, label="Only these kinds"
    )

    def __init__(self, *args: Any, layers: Sequence[LayerRow], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        layer_field = self.fields["layer"]
        assert isinstance(layer_field, forms.TypedChoiceField)
        layer_field.choices = [(row.id, row.label) for row in layers]
        budget_field = self.fields["token_budget"]
        assert isinstance(budget_field, forms.IntegerField)
        # The range is checked once, by the service (apps/assembly/resolve.py); the browser is only hinted.
        # The ceiling is a setting, so it is read per form rather than frozen at import.
        budget_field.widget.attrs.update({"min": 1, "max": settings.MAX_TOKEN_BUDGET})

    def params(self) -> ContextParams:
        """The validated form as the service's request (call only after `is_valid()`)."""
        data = self.cleaned_data
        return ContextParams(
            layer_id=data["layer"],
            layer_external_id=None,
            query=data["query"].strip(),
            query_vector=None,
            token_budget=data["token_budget"],
            model=data["model"].strip() or None,
            profile=None,
            format=data["format"],
            kinds=tuple(data["kinds"]),
        )
