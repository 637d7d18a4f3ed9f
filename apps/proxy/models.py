"""The proxy's tables: each workspace's upstreams and settings, the turns it stored, the calls it relayed."""

from __future__ import annotations

from django.db import models

from apps.layers.models import Layer
from apps.workspaces.models import Workspace


class WireFormat(models.TextChoices):
    """The wire format of an upstream (and of the proxy's paths that speak it)."""

    OPENAI = "openai", "OpenAI-compatible"
    ANTHROPIC = "anthropic", "Anthropic"


# The base URL an upstream takes when its admin gives none: the provider's own, as the SDKs have it.
DEFAULT_BASE_URLS: dict[str, str] = {
    WireFormat.OPENAI: "https://api.openai.com/v1",
    WireFormat.ANTHROPIC: "https://api.anthropic.com",
}


class Upstream(models.Model):
    """Where the proxy forwards a workspace's calls of one wire format, and the key it sends there.

    `key_sealed` is the key encrypted under the server's key and bound to this workspace and format
    (apps/core/sealing.py): never returned by the API or the pages, logged, traced or dumped. Empty:
    no stored key (the upstream needs none, or each request brings `X-Upstream-Authorization`).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=WireFormat.choices)
    base_url = models.CharField(max_length=500)
    key_sealed = models.BinaryField(default=b"", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "kind"], name="uniq_upstream_kind")]

    @property
    def has_key(self) -> bool:
        return bool(self.key_sealed)

    def __str__(self) -> str:
        return f"{self.kind} upstream of {self.workspace_id}: {self.base_url}"


class ProxySettings(models.Model):
    """A workspace's proxy settings: where the sessions it creates go when a call names no parent."""

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="+")
    default_parent = models.ForeignKey(Layer, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"proxy settings of {self.workspace_id}"


class ProxyCall(models.Model):
    """One call relayed to an upstream: what was injected, what we counted, what the upstream reported.

    Holds no key and no prompt: the turns are the session's messages, the context is the assembly's
    record (`trace_id`). The dashboard reads calls, upstream latency and tokens by model from here.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(Layer, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    kind = models.CharField(max_length=16, choices=WireFormat.choices)
    upstream_url = models.CharField(max_length=500, blank=True)  # the base URL it went to (never a key)
    model = models.CharField(max_length=200, blank=True)
    stream = models.BooleanField(default=False)
    status = models.PositiveSmallIntegerField()  # the upstream's answer (502 / 504: none came)
    trace_id = models.CharField(max_length=36, blank=True)  # the assembly's record; "" when none ran
    context_tokens = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)  # ours, of the prompt as sent
    reported_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    reported_completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    turns_stored = models.PositiveIntegerField(default=0)
    prepare_ms = models.FloatField(default=0.0)  # storing and assembling, before the upstream is called
    first_byte_ms = models.FloatField(null=True, blank=True)  # upstream's status and headers, after the call
    upstream_ms = models.FloatField(null=True, blank=True)  # until its last byte
    warnings = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="proxycall_recent"),
            models.Index(fields=["workspace", "trace_id"], name="proxycall_trace"),  # a trace names its call
        ]

    def __str__(self) -> str:
        return f"{self.kind} call of {self.workspace_id}: {self.model} {self.status}"
