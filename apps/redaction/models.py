"""A workspace's allow-list: values the redactor would take for secrets but are not."""

from __future__ import annotations

from django.db import models

from apps.workspaces.models import Workspace


class AllowKind(models.TextChoices):
    EXACT = "exact", "Exact value"
    PATTERN = "pattern", "Regular expression (full match)"


class AllowlistEntry(models.Model):
    """One false positive to keep: an exact value, or a regex that a whole finding must match."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="redaction_allowlist")
    kind = models.CharField(max_length=8, choices=AllowKind.choices)
    value = models.CharField(max_length=500)
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "kind", "value"], name="uniq_redaction_allow"),
        ]

    def clean(self) -> None:
        """The admin validates like the API: a pattern must compile with RE2."""
        import re

        from django.core.exceptions import ValidationError

        from apps.redaction.allowpatterns import UnsupportedPattern, compile_pattern

        if self.kind == AllowKind.PATTERN:
            try:
                compile_pattern(self.value)
            except re.error as exc:
                raise ValidationError({"value": f"not a valid regular expression: {exc}"}) from exc
            except UnsupportedPattern as exc:
                message = f"RE2 cannot run this pattern (no lookarounds or backreferences): {exc}"
                raise ValidationError({"value": message}) from exc

    def __str__(self) -> str:
        return f"{self.kind}: {self.value[:60]}"
