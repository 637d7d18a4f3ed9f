"""The profile page's two request forms: "try it" (beside the unsaved settings) and "compare with".

Both ask for the request a profile is tried on: a layer, a query and optionally a budget (empty:
the profile's, then the default). The request goes through the API's serializer
(apps/web/forms/context_request.py) and the range of a budget is checked once, by the service
(apps/assembly/resolve.py); here only the types.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from apps.assembly.params import ContextParams
from apps.web.forms.context_request import form_params
from apps.web.layer_tree import LayerRow

TRY_PREFIX = "try"


class TrialRequestForm(forms.Form):
    """Layer, query and budget of a trial; `params()` is the request without its profile."""

    layer = forms.TypedChoiceField(coerce=int, label="Layer to try on")
    query = forms.CharField(
        label="Query to try",
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "What is the agent about to do?"}),
        error_messages={"required": "Type a query."},
    )
    token_budget = forms.IntegerField(required=False, label="Budget to try", help_text="empty: the profile's")

    def __init__(self, *args: Any, layers: Sequence[LayerRow], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        layer = self.fields["layer"]
        assert isinstance(layer, forms.ChoiceField)
        layer.choices = [(row.id, row.label) for row in layers]
        self.fields["token_budget"].widget.attrs.update({"min": 1, "max": settings.MAX_TOKEN_BUDGET})

    def params(self, *, profile: str) -> ContextParams | None:
        """The request as an agent naming `profile` would send it, through the API's serializer (None, with
        its error on the form, when the API would refuse it); no deadline, so both sides are whole."""
        data = self.cleaned_data
        body = {
            "layer": data["layer"],
            "query": data["query"].strip(),
            "token_budget": data.get("token_budget"),
            "profile": profile,
            "timeout_ms": 0,
        }
        return form_params(self, body)


class CompareForm(TrialRequestForm):
    """A trial of this profile against `other`, one of the workspace's profiles."""

    other = forms.ChoiceField(label="Other profile")

    field_order = ["other", "layer", "query", "token_budget"]
    # Distinct from the settings' and the try panel's, on the same page.
    LABELS = {"layer": "Layer to compare on", "query": "Query to compare", "token_budget": "Budget for both"}

    def __init__(self, *args: Any, layers: Sequence[LayerRow], others: Sequence[str], **kwargs: Any) -> None:
        super().__init__(*args, layers=layers, **kwargs)
        for name, label in self.LABELS.items():
            self.fields[name].label = label
        self.fields["token_budget"].help_text = "empty: each profile's"
        other = self.fields["other"]
        assert isinstance(other, forms.ChoiceField)
        other.choices = [(name, name) for name in others]
