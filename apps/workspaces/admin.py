"""Admin for workspaces, memberships and API keys. Key secrets never appear; hashes are not editable."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import ModelForm
from django.http import HttpRequest

from apps.workspaces.invitations import invitation_revoke
from apps.workspaces.models import ApiKey, Invitation, Membership, Workspace
from apps.workspaces.services import api_key_create, api_key_revoke, workspace_create


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    """A workspace made here is made by `workspace_create`: with its company layer and a first key."""

    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    readonly_fields = ["created_at"]
    inlines = [MembershipInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Workspace | None = None) -> list[str]:
        # The TTLs by layer kind are validated by the settings API (the layer kinds are layers' own).
        return ["slug", "created_at", "layer_kind_ttl_days"] if obj else ["created_at", "layer_kind_ttl_days"]

    def save_model(self, request: HttpRequest, obj: Workspace, form: ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # The form already checked the slug (a valid, unused slug field), as workspace_create does.
        workspace, created = workspace_create(slug=obj.slug, name=obj.name)
        obj.pk, obj.created_at = workspace.pk, workspace.created_at
        obj._state.adding = False
        messages.warning(
            request,
            f"Workspace {workspace.slug} created with its company layer. Its API key {created.api_key.name!r} "
            f"is shown once: {created.secret}",
        )


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "workspace", "role", "created_at"]
    list_filter = ["role", "workspace"]
    search_fields = ["user__username", "user__email", "workspace__slug"]
    autocomplete_fields = ["user", "workspace"]
    list_select_related = ["user", "workspace"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are created through the service (the secret is shown once, in a message) and revoked, not edited."""

    list_display = ["name", "workspace", "prefix", "scopes", "created_at", "last_used_at", "revoked_at", "active"]
    list_filter = ["workspace", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix", "workspace__slug"]
    list_select_related = ["workspace"]
    exclude = ["key_hash"]
    actions = ["revoke"]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        if obj is None:
            return ["prefix", "created_at", "last_used_at", "revoked_at"]
        return ["workspace", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]

    @admin.display(boolean=True, description="Active")
    def active(self, obj: ApiKey) -> bool:
        return obj.is_active

    def save_model(self, request: HttpRequest, obj: ApiKey, form: ModelForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # A key is born only through the service, which generates the secret and stores its hash.
        created = api_key_create(workspace=obj.workspace, name=obj.name, scopes=list(obj.scopes))
        saved = created.api_key
        obj.pk, obj.prefix, obj.key_hash, obj.created_at = saved.pk, saved.prefix, saved.key_hash, saved.created_at
        obj._state.adding = False
        messages.warning(request, f"The new key is {created.secret} — copy it now, it is not shown again.")

    @admin.action(description="Revoke selected keys")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for api_key in queryset:
            api_key_revoke(api_key=api_key)
        messages.success(request, f"Revoked {queryset.count()} key(s).")


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Invitations are made in the pages or the API (their link is shown once there); here they are read
    and revoked. The token's hash is never shown."""

    list_display = ["workspace", "role", "note", "state", "created_by", "created_at", "expires_at", "accepted_by"]
    list_filter = ["workspace", "role"]
    list_select_related = ["workspace", "created_by", "accepted_by"]
    exclude = ["token_hash"]
    readonly_fields = [
        "workspace",
        "role",
        "note",
        "created_by",
        "created_by_key",
        "created_at",
        "expires_at",
        "accepted_at",
        "accepted_by",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.action(description="Revoke selected invitations")
    def revoke(self, request: HttpRequest, queryset: QuerySet[Invitation]) -> None:
        revoked = 0
        for invitation in queryset.filter(accepted_at__isnull=True):
            invitation_revoke(invitation=invitation)
            revoked += 1
        messages.success(request, f"Revoked {revoked} invitation(s); accepted ones stay as they are.")
