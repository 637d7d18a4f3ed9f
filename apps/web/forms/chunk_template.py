"""The chunk template editor: a name, a body and bodies per item type, checked by `template_errors`.

The per-type bodies are rows of two fields (`type_N`, `body_N`): the ones stored, then EMPTY_ROWS
empty ones to add more; a row whose type and body are both empty is left out.
"""

from __future__ import annotations

from typing import Any

from django import forms

from apps.assembly.services.templates import template_errors
from apps.core.field_errors import INVALID_BY_TYPE

EMPTY_ROWS = 2


class TemplateForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="A-Z a-z 0-9 _ . -; agents name it as `template`")
    body = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="for every chunk without a body of its own type",
    )

    def __init__(self, *args: Any, by_type: dict[str, str] | None = None, editing: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.editing = editing
        if editing:
            self.fields["name"].disabled = True
            self.fields["name"].help_text = "the name agents use; it does not change"
        stored = list((by_type or {}).items())
        rows = len(stored) + EMPTY_ROWS
        if self.is_bound:
            rows = max(rows, sum(1 for key in self.data if key.startswith("type_")))
        self.rows: list[tuple[str, str]] = []
        for n in range(rows):
            kind, text = stored[n] if n < len(stored) else ("", "")
            self.fields[f"type_{n}"] = forms.CharField(
                required=False, strip=True, initial=kind, label=f"Type {n + 1}", help_text="an item type or kind"
            )
            self.fields[f"body_{n}"] = forms.CharField(
                required=False,
                strip=False,
                initial=text,
                label=f"Body for type {n + 1}",
                widget=forms.Textarea(attrs={"rows": 2}),
            )
            self.rows.append((f"type_{n}", f"body_{n}"))

    def row_fields(self) -> list[tuple[forms.BoundField, forms.BoundField]]:
        return [(self[kind], self[text]) for kind, text in self.rows]

    def by_type(self) -> dict[str, str]:
        """The rows that say something, by type (a row with a body but no type keeps its place as '')."""
        data = self.cleaned_data
        return {
            data.get(kind, ""): data.get(text, "")
            for kind, text in self.rows
            if data.get(kind, "") or data.get(text, "").strip()
        }

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        by_type = self.by_type()
        names = [data.get(kind, "") for kind, text in self.rows if data.get(kind, "")]
        for kind, _ in self.rows:
            if data.get(kind) and names.count(data[kind]) > 1 and kind not in self.errors:
                self.add_error(kind, "this type has a body already")
        said = [(kind, text) for kind, text in self.rows if data.get(kind, "") or data.get(text, "").strip()]
        row_of = {data.get(kind, ""): (kind, text) for kind, text in said}
        errors = template_errors(name=data.get("name", ""), body=data.get("body", ""), by_type=by_type)
        for key, error in errors.items():
            field: str | None
            if key.startswith("by_type:"):
                type_field, body_field = row_of[key.removeprefix("by_type:")]
                field = type_field if error.code == INVALID_BY_TYPE.code else body_field
            else:
                field = key if key in ("name", "body") else None
            if field is None or field not in self.errors:
                self.add_error(field, error.message)
        return data
