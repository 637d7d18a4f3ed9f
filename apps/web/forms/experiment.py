"""The experiments page's two forms: upload a question set, and start a run of one with two profiles.

The file's content is checked by the experiments' reader (apps/experiments/questions.py), every
problem at once; the view puts them on the file field. A budget's range is the service's to check.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from apps.experiments.services import MAX_NAME_CHARS
from apps.web.layer_tree import LayerRow

DEFAULTS_LABEL = "Defaults (no profile)"


class QuestionSetUploadForm(forms.Form):
    name = forms.CharField(label="Name of the set", max_length=MAX_NAME_CHARS)
    file = forms.FileField(
        label="Questions (JSON lines)",
        help_text='one {"question": "...", "expected": ["item external id", ...]} per line',
        error_messages={"required": "Choose a file.", "empty": "The file is empty."},
    )


class ExperimentForm(forms.Form):
    """A set, the layer to ask at, profiles A and B ("": the defaults) and a budget (empty: each profile's)."""

    question_set = forms.TypedChoiceField(coerce=int, label="Question set")
    layer = forms.TypedChoiceField(coerce=int, label="Ask at layer")
    profile_a = forms.ChoiceField(label="Profile A", required=False)
    profile_b = forms.ChoiceField(label="Profile B", required=False)
    token_budget = forms.IntegerField(required=False, label="Token budget", help_text="empty: each profile's")

    def __init__(
        self,
        *args: Any,
        sets: Sequence[tuple[int, str]],
        layers: Sequence[LayerRow],
        profiles: Sequence[str],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        choices: dict[str, list[tuple[Any, str]]] = {
            "question_set": list(sets),
            "layer": [(row.id, row.label) for row in layers],
            "profile_a": [("", DEFAULTS_LABEL), *((name, name) for name in profiles)],
            "profile_b": [("", DEFAULTS_LABEL), *((name, name) for name in profiles)],
        }
        for name, options in choices.items():
            field = self.fields[name]
            assert isinstance(field, forms.ChoiceField)
            field.choices = options
        budget = self.fields["token_budget"]
        budget.widget.attrs.update({"min": 1, "max": settings.MAX_TOKEN_BUDGET})
        assert isinstance(budget, forms.IntegerField)
        budget.validators.append(_budget_range)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if "profile_a" in data and "profile_b" in data and data["profile_a"] == data["profile_b"]:
            self.add_error("profile_b", "Choose a profile other than A: a run compares two.")
        return data


def _budget_range(value: int | None) -> None:
    if value is not None and not 1 <= value <= settings.MAX_TOKEN_BUDGET:
        raise forms.ValidationError(f"A budget is 1 to {settings.MAX_TOKEN_BUDGET} tokens.")
