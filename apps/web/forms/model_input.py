"""The model field of the pages' forms: a text input that offers the model catalogue's names."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.core.tokenizer import catalogue_models


class CatalogueModelInput(forms.TextInput):
    """A text input with a <datalist> of the catalogue's models (provider, window, exact or estimated);
    any other name is still accepted: it is counted as an unknown model, estimated, with a warning."""

    template_name = "web/widgets/model_input.html"

    def get_context(self, name: str, value: Any, attrs: dict[str, Any] | None) -> dict[str, Any]:
        context = super().get_context(name, value, attrs)
        context["widget"]["attrs"]["list"] = f"{context['widget']['attrs'].get('id') or name}-models"
        context["models"] = [
            (spec.name, f"{spec.provider}, {spec.context_window:,} tokens, {'exact' if spec.exact else 'estimated'}")
            for spec in catalogue_models()
            if not spec.name.endswith(".")
        ]
        return context
