"""Tenants, their members and their API keys."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class Workspace(models.Model):
    """The tenant: every other row belongs to exactly one workspace."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"


class Membership(models.Model):
    """A user's role in one workspace."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="uniq_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


class Scope(models.TextChoices):
    """What a key may do: `read` (GET, and POSTs that only query), `write` (changes), `admin` (manage keys)."""

    READ = "read", "Read"
    WRITE = "write", "Write"
    ADMIN = "admin", "Admin"


def default_scopes() -> list[str]:
    """Keys are read+write unless asked otherwise: an admin key is always asked for by name."""
    return [Scope.READ.value, Scope.WRITE.value]


class ApiKey(models.Model):
    """A workspace's API key. Only the SHA-256 of the secret is stored; the secret is shown once."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="First characters of the key, to recognise it.")
    key_hash = models.CharField(max_length=64, unique=True)
    scopes = ArrayField(models.CharField(max_length=8, choices=Scope.choices), default=default_scopes)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class IdempotencyKey(models.Model):
    """The first answer to a POST sent with `Idempotency-Key`, replayed for a repeat of that key.

    Kept in PostgreSQL, per workspace and key: a client retries exactly when something failed
    (the cache and broker may be the very things that are down), and every instance must see it.
    `status_code` is NULL while the first request runs. Rows expire after IDEMPOTENCY_KEY_HOURS.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="idempotency_keys")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # SHA-256 of method, path and body
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=100, blank=True, default="")
    body = models.BinaryField(default=b"")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "key"], name="uniq_idempotency_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self) -> str:
        return f"{self.key} → {self.status_code}"
