"""The context preview's form: everything an agent may ask for that a person would want to try.

Field names are the API's (`POST /api/v1/context/`), so the same query string drives the page, its
streaming mode (`/preview/stream/`) and a shared link; both are validated by the API's serializer
(apps/web/forms/context_request.py), so the page refuses what the API refuses, with its message. Empty
budget, model and format fall back to the profile, then to the settings, as for an agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.conf import settings

from apps.assembly.params import ContextParams
from apps.assembly.selectors import template_names
from apps.engine import BUILTIN_TEMPLATES
from apps.layers.models import ItemKind
from apps.layers.selectors import named_conversations
from apps.profiles.models import OutputFormat
from apps.profiles.selectors import profiles_list
from apps.web.forms.context_request import form_params
from apps.web.forms.model_input import CatalogueModelInput
from apps.web.layer_tree import LayerRow
from apps.workspaces.models import Workspace


class PreviewForm(forms.Form):
    """Layer, query, budget, model, format, profile, agent type, template, conversation, the agent's
    current error (known fixes for it come first), kinds, deadline."""

    layer = forms.TypedChoiceField(coerce=int, label="Layer")
    query = forms.CharField(
        required=False,
        max_length=4000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "What is the agent about to do?"}),
    )
    token_budget = forms.IntegerField(required=False, label="Token budget")
    model = forms.CharField(required=False, label="Model", widget=CatalogueModelInput)
    format = forms.ChoiceField(required=False, label="Format")
    profile = forms.ChoiceField(required=False, label="Agent profile")
    agent_type = forms.CharField(required=False, label="Agent type")
    template = forms.ChoiceField(required=False, label="Template")
    conversation_id = forms.ChoiceField(required=False, label="Conversation")
    error = forms.CharField(
        required=False,
        label="The agent's current error",
        help_text="Known fixes for it come first (error patterns)",
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "e.g. a traceback's last line"}),
    )
    kinds = forms.MultipleChoiceField(
        choices=ItemKind.choices, required=False, widget=forms.CheckboxSelectMultiple, label="Only these kinds"
    )
    timeout_ms = forms.IntegerField(required=False, label="Deadline (ms)", help_text="0 waits for the whole context")

    def __init__(self, *args: Any, workspace: Workspace, layers: Sequence[LayerRow], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._choices("layer", [(row.id, row.label) for row in layers])
        self._choices("format", [("", "The profile's (or markdown)"), *OutputFormat.choices])
        profiles = profiles_list(workspace=workspace).values_list("name", flat=True)
        self._choices("profile", [("", "None"), *((name, name) for name in profiles)])
        own = template_names(workspace=workspace)
        templates = [*own, *(name for name in sorted(BUILTIN_TEMPLATES) if name not in own)]
        self._choices("template", [("", "The format's default"), *((name, name) for name in templates)])
        conversations = named_conversations(workspace=workspace)
        self._choices(
            "conversation_id",
            [("", "The layer's own"), *((ext, f"{kind}: {name} ({ext})") for ext, kind, name in conversations)],
        )
        # Ranges are checked once, by the API's serializer or the service (apps/assembly/resolve.py); the
        # browser is only hinted.
        self.fields["timeout_ms"].widget.attrs.update({"min": 0, "max": 60_000})
        self.fields["token_budget"].widget.attrs.update(
            {"min": 1, "max": settings.MAX_TOKEN_BUDGET, "placeholder": str(settings.DEFAULT_TOKEN_BUDGET)}
        )
        self.fields["model"].widget.attrs["placeholder"] = str(settings.DEFAULT_MODEL)
        self.fields["timeout_ms"].widget.attrs["placeholder"] = str(settings.ASSEMBLY_TIMEOUT_MS)

    def _choices(self, name: str, choices: list[tuple[Any, str]]) -> None:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        field.choices = choices

    def params(self) -> ContextParams | None:
        """The validated form as the API's body, through the API's serializer (call after `is_valid()`):
        None, with the API's error on the form, when the API would refuse it."""
        data = self.cleaned_data
        body = {
            "layer": data["layer"],
            "query": data["query"].strip(),
            "token_budget": data.get("token_budget"),
            "model": (data.get("model") or "").strip(),
            "profile": data.get("profile"),
            "format": data.get("format"),
            "agent_type": (data.get("agent_type") or "").strip(),
            "template": data.get("template"),
            "conversation_id": data.get("conversation_id"),
            "error": (data.get("error") or "").strip(),
            "kinds": data["kinds"],
            "timeout_ms": data.get("timeout_ms"),
        }
        return form_params(self, body)
