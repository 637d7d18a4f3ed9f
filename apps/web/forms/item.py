"""The inline item editor: the fields the API's PATCH /api/v1/items/{id}/ may change.

Shapes (a number, a JSON object) are the form's; every rule about items is `item_update_errors`,
the validator `item_update` (and so the API) applies, so the page shows all its reasons at once.
"""

from __future__ import annotations

import json
from typing import Any

from django import forms

from apps.core.errors import InvalidInput
from apps.core.strict_json import loads_strict
from apps.layers.models import ITEM_TYPES, Item, ItemKind, MessageRole, Priority, RelationshipKind
from apps.layers.relationships import relationship_errors
from apps.layers.services import item_update_errors
from apps.workspaces.models import Workspace

MAX_LIST = 100  # the API's limit on agent_types, task_ids and source_refs


def _words(text: str) -> list[str]:
    """ "a, b ,,c" → ["a", "b", "c"] (also one per line)."""
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


class ItemEditForm(forms.Form):
    """Edits one item; `changes()` is what `item_update` gets (the kind, layer and parent never change)."""

    type = forms.CharField(required=False, max_length=32)
    title = forms.CharField(required=False, max_length=500)
    # autofocus: htmx moves the focus here when the editor is swapped in.
    content = forms.CharField(required=False, strip=False, widget=forms.Textarea(attrs={"rows": 4, "autofocus": True}))
    pinned = forms.BooleanField(required=False, label="Pinned (always sent)")
    importance = forms.FloatField(help_text="0 to 1")
    confidence = forms.FloatField(required=False, help_text="0 to 1, or empty")
    priority = forms.ChoiceField(required=False, choices=[("", "none"), *Priority.choices])
    role = forms.ChoiceField(required=False, choices=[("", "none"), *MessageRole.choices])
    group_id = forms.CharField(required=False, max_length=200, label="Group")
    agent_types = forms.CharField(required=False, label="Agent types", help_text="comma-separated")
    task_ids = forms.CharField(required=False, label="Task ids", help_text="comma-separated")
    source_refs = forms.CharField(
        required=False, label="Source references", widget=forms.Textarea(attrs={"rows": 2}), help_text="one per line"
    )
    external_id = forms.CharField(required=False, max_length=200, label="External id")
    metadata = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), help_text='a JSON object, e.g. {"source": "wiki"}'
    )

    def __init__(self, *args: Any, item: Item, **kwargs: Any) -> None:
        kwargs.setdefault("initial", self.initial_of(item))
        kwargs.setdefault("auto_id", f"item-{item.pk}-%s")
        super().__init__(*args, **kwargs)
        self.item = item
        if item.kind != ItemKind.MESSAGE:
            del self.fields["role"]  # role and parent apply to messages only
        allowed = ITEM_TYPES.get(item.kind)
        self.type_options = [t for t in allowed or () if t]
        if allowed:
            self.fields["type"].help_text = "one of: " + ", ".join(t or "(none)" for t in allowed)
            self.fields["type"].widget.attrs["list"] = f"item-{item.pk}-types"

    @staticmethod
    def initial_of(item: Item) -> dict[str, Any]:
        return {
            "type": item.type,
            "title": item.title,
            "content": item.content,
            "pinned": item.pinned,
            "importance": item.importance,
            "confidence": item.confidence,
            "priority": item.priority,
            "role": item.role,
            "group_id": item.group_id,
            "agent_types": ", ".join(item.agent_types),
            "task_ids": ", ".join(item.task_ids),
            "source_refs": "\n".join(item.source_refs),
            "external_id": item.external_id or "",
            "metadata": json.dumps(item.metadata, indent=1, ensure_ascii=False) if item.metadata else "{}",
        }

    def clean_metadata(self) -> dict[str, Any]:
        text = self.cleaned_data.get("metadata", "").strip() or "{}"
        try:
            value = loads_strict(text, where="metadata")
        except InvalidInput as exc:
            raise forms.ValidationError(exc.message) from exc
        if not isinstance(value, dict):
            raise forms.ValidationError("must be a JSON object ({...})")
        return value

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

    def clean_task_ids(self) -> list[str]:
        return self._list("task_ids", per_line=False, longest=200)

    def clean_source_refs(self) -> list[str]:
        return self._list("source_refs", per_line=True, longest=1000)

    def changes(self) -> dict[str, Any]:
        """The parsed values, by the service's field names (a field with a shape error is left out)."""
        data = dict(self.cleaned_data)
        if "external_id" in data:
            data["external_id"] = data["external_id"] or None
        return {name: data[name] for name in self.fields if name in data}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # The rules run on every value that parsed, so a bad number and an empty content show together.
        for name, error in item_update_errors(item=self.item, changes=self.changes()).items():
            if name not in self.errors:
                self.add_error(name if name in self.fields else None, error.message)
        return data


class RelationshipForm(forms.Form):
    """A relationship from or to the item being edited; checked by `relationship_errors`, the service's validator."""

    kind = forms.ChoiceField(choices=RelationshipKind.choices, label="Relationship")
    direction = forms.ChoiceField(
        choices=[("outgoing", "this item → the other"), ("incoming", "the other → this item")], label="Direction"
    )
    other = forms.IntegerField(
        label="Other item id", min_value=1, help_text="its #id, from any layer of this workspace"
    )

    def __init__(self, *args: Any, item: Item, workspace: Workspace, **kwargs: Any) -> None:
        kwargs.setdefault("auto_id", f"item-{item.pk}-rel-%s")
        super().__init__(*args, **kwargs)
        self.item = item
        self.workspace = workspace

    def ends(self) -> tuple[int, int]:
        """(source id, target id)."""
        other = self.cleaned_data["other"]
        return (self.item.pk, other) if self.cleaned_data["direction"] == "outgoing" else (other, self.item.pk)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        source_id, target_id = self.ends()
        errors = relationship_errors(
            workspace=self.workspace, source_id=source_id, target_id=target_id, kind=data["kind"]
        )
        for name, error in errors.items():
            field = "other" if name in ("source", "target") else name
            if field not in self.errors:
                self.add_error(field if field in self.fields else None, error.message)
        return data
