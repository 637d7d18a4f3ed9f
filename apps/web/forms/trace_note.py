"""Tags and a note on a trace: the shapes here, every rule `trace_notes.trace_note_errors`."""

from __future__ import annotations

from typing import Any

from django import forms

from apps.web.trace_notes import MAX_NOTE_CHARS, tags_parse, trace_note_errors


class NoteForm(forms.Form):
    tags = forms.CharField(
        required=False,
        max_length=1100,
        label="Tags",
        help_text="separated by spaces or commas, e.g. regression needs-pin",
    )
    note = forms.CharField(
        required=False,
        strip=False,
        max_length=MAX_NOTE_CHARS,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Note",
        help_text="what this trace shows, for whoever opens it next",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "trace-note-%s")
        super().__init__(*args, **kwargs)

    def clean_tags(self) -> list[str]:
        return tags_parse(self.cleaned_data.get("tags", ""))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        errors = trace_note_errors(tags=data.get("tags", []), note=data.get("note", ""))
        for name, error in errors.items():
            if name not in self.errors:
                self.add_error(name, error.message)
        return data
