"""The profile form: every setting as its own field, ranking weights as labelled numbers.

Checked by the profile service's own `profile_check` (the API's validator), one field group at a
time, so every error shows at once beside its field.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

from django import forms
from django.conf import settings

from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_CONTEXT_WINDOW
from apps.engine.rank import RankWeights
from apps.profiles.models import AgentProfile, ContextPosition, ConversationPreset, OutputFormat
from apps.profiles.services import RANKING_WEIGHT_KEYS, ProfileInput, check_name, profile_check
from apps.web.forms.model_input import CatalogueModelInput

WEIGHT_HELP = {
    "vector": "place in the vector search results",
    "keyword": "place in the keyword search results",
    "relevance": "fused search relevance",
    "recency": "newer items",
    "importance": "items marked important",
    "confidence": "memories' confidence",
    "priority": "packages' priority level",
    "group": "same task group",
    "agent_type": "made for this agent type",
    "distance": "closeness in the conversation",
    "helpfulness": "strategies' helpfulness",
    "focus": "the conversation the search points at most",
    "recency_half_life_days": "days until recency halves",
}
WEIGHTS = sorted(RANKING_WEIGHT_KEYS)


def weight_field(key: str) -> str:
    return f"weight_{key}"


class ProfileForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Letters, digits, _ . - (agents send it as `profile`)")
    agent_type = forms.CharField(required=False, max_length=100)
    model = forms.CharField(required=False, max_length=100, widget=CatalogueModelInput)
    context_window = forms.IntegerField(required=False, label="Context window (tokens)")
    token_budget = forms.IntegerField(required=False, label="Token budget")
    retrieval_limit = forms.IntegerField(required=False, label="Package limit")
    safety_margin = forms.FloatField(required=False, initial=0.15, label="Safety margin (0-0.9)")
    preferred_format = forms.ChoiceField(choices=OutputFormat.choices, label="Format")
    template = forms.CharField(required=False, max_length=100, help_text="A template name (see /api/v1/templates/)")
    conversation_preset = forms.ChoiceField(choices=ConversationPreset.choices)
    context_position = forms.ChoiceField(
        choices=ContextPosition.choices,
        required=False,
        initial=ContextPosition.AFTER,
        label="Proxy puts the context",
        help_text="in the client's system prompt (LLM proxy calls)",
    )
    ranking_function = forms.ChoiceField(choices=[], label="Ranking function")
    type_filters = forms.CharField(
        required=False, label="Only these types", help_text="comma-separated, e.g. fact, decision"
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ranking = self.fields["ranking_function"]
        assert isinstance(ranking, forms.ChoiceField)
        ranking.choices = [(name, name) for name in settings.RANKING_FUNCTIONS]
        defaults = RankWeights(recency_half_life_days=settings.RECENCY_HALF_LIFE_DAYS)
        for key in WEIGHTS:
            default = f"{getattr(defaults, key):g}"
            self.fields[weight_field(key)] = forms.FloatField(
                required=False,
                label=key.replace("_", " ").capitalize(),
                help_text=f"{WEIGHT_HELP.get(key, '')} (default {default})",
                widget=forms.NumberInput(attrs={"placeholder": default, "step": "any"}),
            )

    @classmethod
    def initial_of(cls, profile: AgentProfile) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(profile, name) for name in asdict(ProfileInput())}
        data["name"] = profile.name
        data["type_filters"] = ", ".join(profile.type_filters or [])
        for key, value in (profile.ranking_weights or {}).items():
            if key in RANKING_WEIGHT_KEYS:
                data[weight_field(key)] = value
        return data

    def weight_fields(self) -> list[forms.BoundField]:
        return [self[weight_field(key)] for key in WEIGHTS]

    def profile_input(self) -> ProfileInput:
        d = self.cleaned_data
        return ProfileInput(
            agent_type=d["agent_type"].strip(),
            model=d["model"].strip(),
            context_window=d["context_window"],
            token_budget=d["token_budget"],
            retrieval_limit=d["retrieval_limit"],
            preferred_format=d["preferred_format"],
            type_filters=[t.strip() for t in d["type_filters"].split(",") if t.strip()],
            template=d["template"].strip(),
            conversation_preset=d["conversation_preset"],
            ranking_function=d["ranking_function"],
            ranking_weights={k: d[weight_field(k)] for k in WEIGHTS if d.get(weight_field(k)) is not None},
            safety_margin=0.15 if d["safety_margin"] is None else d["safety_margin"],
            context_position=d["context_position"] or ContextPosition.AFTER,
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            check_name(data["name"])
        except InvalidInput as exc:
            self.add_error("name", exc.message)
        full = self.profile_input()
        base = ProfileInput()
        groups: list[tuple[str, dict[str, Any]]] = [
            ("token_budget", {"context_window": full.context_window, "token_budget": full.token_budget}),
            ("retrieval_limit", {"retrieval_limit": full.retrieval_limit}),
            ("type_filters", {"type_filters": full.type_filters}),
            ("safety_margin", {"safety_margin": full.safety_margin}),
        ]
        groups += [(weight_field(k), {"ranking_weights": {k: v}}) for k, v in full.ranking_weights.items()]
        for field, values in groups:
            try:
                profile_check(data=replace(base, **values))
            except InvalidInput as exc:
                target = "context_window" if exc.code == INVALID_CONTEXT_WINDOW.code else field
                self.add_error(target, exc.message)
        return data
