"""Tenants, their members and their API keys."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class Workspace(models.Model):
    """The tenant: every other row belongs to exactly one workspace."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    records_retention_days = models.PositiveIntegerField(
        default=30,
        help_text="Days an assembly record (request, figures, trace) is kept; the dashboard's rollups outlive it. "
        "0 keeps records forever.",
    )
    messages_retention_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Days a message item of a closed session (no new message for SESSION_CLOSED_AFTER_DAYS) is "
        "kept, counted from its own time; empty keeps them forever.",
    )
    layer_kind_ttl_days = models.JSONField(
        default=dict,
        blank=True,
        help_text='Days an item is kept, by the kind of its layer ({"session": 30}); kinds not named keep theirs.',
    )

    def __str__(self) -> str:
        return self.slug


class Role(models.TextChoices):
    """A member's role in one workspace; each allows what the ones before it allow.

    Viewers read; operators also edit layers, items, profiles, templates and error patterns;
    developers also open the developer console (assemblies, traces, replay, state dumps); admins
    also manage the workspace's API keys, members and invitations.
    """

    VIEWER = "viewer", "Viewer"
    OPERATOR = "operator", "Operator"
    DEVELOPER = "developer", "Developer"
    ADMIN = "admin", "Admin"


ROLE_ORDER: tuple[str, ...] = tuple(Role.values)


def role_allows(*, role: str | None, needed: str) -> bool:
    """True when `role` is `needed` or above it (viewer < operator < developer < admin)."""
    if role not in ROLE_ORDER:
        return False
    return ROLE_ORDER.index(role) >= ROLE_ORDER.index(needed)


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


class Invitation(models.Model):
    """An invitation to join one workspace with a role: the one way in besides creating the workspace.

    Only the SHA-256 of its token is stored (the link is shown once, to the admin who made it). It works
    once (`accepted_at`), until `expires_at`, unless revoked (`revoked_at`); accepting needs a signed-in
    person, so nobody becomes a member without their consent (`apps/workspaces/invitations.py`).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=16, choices=Role.choices)
    note = models.CharField(max_length=200, blank=True, default="", help_text="Whom it is for (admins only).")
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_by_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="invitation_workspace_created")]

    @property
    def state(self) -> str:
        """`accepted`, `revoked`, `expired` or `pending` (the only one that can be accepted)."""
        if self.accepted_at is not None:
            return "accepted"
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "pending"

    def __str__(self) -> str:
        return f"{self.role} in {self.workspace} ({self.state})"


class IdempotencyKey(models.Model):
    """The first answer to a POST sent with `Idempotency-Key`, replayed for a repeat of that key.

    Kept in PostgreSQL, per API key and idempotency key: a client retries exactly when something
    failed (the cache and broker may be the very things that are down), and every instance must see
    it. `status_code` is NULL while the first request runs (apps/workspaces/idempotency.py holds an
    advisory lock for as long). `body` is encrypted with a key derived from the API key's secret,
    which the database never holds. Rows expire after IDEMPOTENCY_KEY_HOURS.
    """

    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="idempotency_keys")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)  # SHA-256 of method, path and body
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    content_type = models.CharField(max_length=100, blank=True, default="")
    body = models.BinaryField(default=b"")  # nonce + AES-GCM ciphertext of the answer's body
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["api_key", "key"], name="uniq_idempotency_api_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created")]

    def __str__(self) -> str:
        return f"{self.key} → {self.status_code}"


class AuditTarget(models.TextChoices):
    """What an audit entry is about (apps/workspaces/audit.py)."""

    WORKSPACE = "workspace", "Workspace settings"
    CONFIG = "config", "Layer configuration"
    PROFILE = "profile", "Profile"
    TEMPLATE = "template", "Template"
    ITEM = "item", "Item"
    MEMBER = "member", "Member"
    KEY = "key", "API key"
    UPSTREAM = "upstream", "Upstream"
    ERROR_PATTERN = "error_pattern", "Error pattern"


class AuditEntry(models.Model):
    """One change of a workspace's settings or content: who (a user or an API key, never a secret),
    what, when, and the changed fields' old and new values (secrets masked: apps/workspaces/audit.py).

    The actor's ids are plain numbers: an entry outlives the user or key it names."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="audit_entries")
    created_at = models.DateTimeField(default=timezone.now)
    actor_kind = models.CharField(max_length=8)  # user | key | system
    actor = models.CharField(max_length=200)  # "alice", "key ci (ca_Xy12…)", "system"
    actor_user_id = models.BigIntegerField(null=True, blank=True)
    actor_key_id = models.BigIntegerField(null=True, blank=True)
    target_kind = models.CharField(max_length=16, choices=AuditTarget.choices)
    target_id = models.CharField(max_length=100, blank=True, default="")
    target_label = models.CharField(max_length=200, blank=True, default="")
    action = models.CharField(max_length=16)  # create | update | delete | revoke | ...
    changes = models.JSONField(default=dict, blank=True)  # {field: [old, new]}

    class Meta:
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="audit_workspace_recent"),
            models.Index(fields=["workspace", "target_kind", "-created_at"], name="audit_workspace_target"),
        ]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.target_kind} {self.target_id}"
