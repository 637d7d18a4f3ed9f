"""The session import form: where the new session goes, its name and an export file, read as the API reads
`POST /api/v1/layers/import/` (strict JSON, then the graph's shape with the API's code and message)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms

from apps.conversations.graph_input import GraphInput
from apps.core.errors import DomainError
from apps.core.exceptions import validation_error_body
from apps.core.strict_json import loads_strict
from apps.layers.models import KIND_RANK, LayerKind
from apps.web.layer_tree import LayerRow


class ImportForm(forms.Form):
    """Where the new session goes, its name (the export's when empty) and the exported JSON file."""

    parent = forms.TypedChoiceField(coerce=int, label="Put it under", help_text="a layer above a session")
    name = forms.CharField(max_length=200, required=False, help_text="empty: the exported session's name")
    graph = forms.FileField(label="Export file", help_text="a session's export (.json), from this page or the API")

    def __init__(self, *args: Any, layers: Sequence[LayerRow], **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", "import-%s")
        super().__init__(*args, **kwargs)
        above = [row for row in layers if KIND_RANK[row.kind] < KIND_RANK[LayerKind.SESSION]]
        self.fields["parent"].choices = [(row.id, row.label) for row in above]  # type: ignore[attr-defined]

    def clean_graph(self) -> dict[str, Any]:
        upload = self.cleaned_data["graph"]
        try:
            data = loads_strict(upload.read(), where="file")
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from exc
        graph = GraphInput(data=data)
        if not graph.is_valid():
            raise forms.ValidationError(validation_error_body(graph.errors)["error"]["message"])
        return dict(graph.validated_data)
