"""Agent profiles: per-agent defaults for context requests."""

from __future__ import annotations

from django.db import models

from apps.workspaces.models import Workspace


class OutputFormat(models.TextChoices):
    JSON = "json", "JSON"
    MARKDOWN = "markdown", "Markdown"
    TEXT = "text", "Text"


class ConversationPreset(models.TextChoices):
    """Presets for how far from the current turn messages stay full, summarized or titled."""

    AGGRESSIVE = "aggressive", "Aggressive"
    BALANCED = "balanced", "Balanced"
    CONTEXT_RICH = "context_rich", "Context-rich"


class ContextPosition(models.TextChoices):
    """Where the LLM proxy puts the context in the system prompt of a call (the Anthropic `system` field,
    OpenAI's first system or developer message, the Responses `instructions`): after the client's own
    text by default, so that the client's system prompt stays a cacheable prefix (the providers' prompt
    caches match a prompt's start); before it on request."""

    AFTER = "after_system", "After the client's system prompt"
    BEFORE = "before_system", "Before the client's system prompt"


class AgentProfile(models.Model):
    """Defaults an agent's requests inherit: model, window, budget, limits, format, type filters, and the
    items its contexts leave out."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="profiles")
    name = models.CharField(max_length=100)
    agent_type = models.CharField(max_length=100, blank=True, default="")
    model = models.CharField(max_length=100, blank=True, default="")
    context_window = models.PositiveIntegerField(null=True, blank=True)
    token_budget = models.PositiveIntegerField(null=True, blank=True)
    retrieval_limit = models.PositiveIntegerField(null=True, blank=True)
    preferred_format = models.CharField(max_length=16, choices=OutputFormat.choices, default=OutputFormat.MARKDOWN)
    type_filters = models.JSONField(default=list, blank=True)
    template = models.CharField(max_length=100, blank=True, default="", help_text="Named output template.")
    conversation_preset = models.CharField(
        max_length=16, choices=ConversationPreset.choices, default=ConversationPreset.BALANCED
    )
    ranking_function = models.CharField(max_length=100, default="default")
    ranking_weights = models.JSONField(default=dict, blank=True, help_text="Overrides of the ranking weights.")
    safety_margin = models.FloatField(default=0.15)
    context_position = models.CharField(max_length=16, choices=ContextPosition.choices, default=ContextPosition.AFTER)
    # Items this profile's contexts leave out (traced `profile_excluded`): set one at a time from the
    # preview page (profiles/services.py profile_item_exclude) or as a whole list by the API
    # (excluded_items_check), never by the profile form or a PUT that leaves them out; a draft's "try it"
    # keeps the stored ones (assembly/resolve.py). Ids of this workspace's items (a deleted item's id
    # stays, matching nothing).
    excluded_items = models.JSONField(default=list, blank=True, help_text="Ids of the items its contexts leave out.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="uniq_profile_name")]

    def __str__(self) -> str:
        return self.name
