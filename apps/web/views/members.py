"""Keys and members: a workspace's API keys, members and invitations; workspace admins only (a superuser
is admin everywhere). People join by invitation only: nobody is added by username (issue 26 #14)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError
from apps.web.access import workspace_view
from apps.web.forms.members import InvitationForm, KeyForm, RoleForm
from apps.web.secret_panel import ShownSecret, no_store
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.invitations import invitation_create, invitation_revoke
from apps.workspaces.models import Role
from apps.workspaces.selectors import (
    api_key_get,
    api_keys_list,
    invitation_get,
    invitations_list,
    membership_get_by_id,
    memberships_list,
)
from apps.workspaces.services import api_key_create, api_key_revoke, membership_remove, membership_set


def _page(
    request: HttpRequest,
    access: WorkspaceAccess,
    *,
    error: str = "",
    status: int = 0,
    shown: ShownSecret | None = None,
    **forms_: forms.Form,
) -> HttpResponse:
    """The page; with a form that failed (422), an `error` refused by a service (its `status`), or a new
    secret `shown` once. Never stored by a cache: `no-store` on every answer of this area."""
    assert access.current is not None
    context = {
        "error": error,
        "shown": shown,
        "keys": api_keys_list(workspace=access.current),
        "members": memberships_list(workspace=access.current),
        "invitations": invitations_list(workspace=access.current, pending_only=True),
        "roles": Role.choices,
        "key_form": forms_.get("key_form") or KeyForm(),
        "invitation_form": forms_.get("invitation_form") or InvitationForm(),
        "crumbs": [("Keys and members", None)],
    }
    return no_store(render(request, "web/members/page.html", context, status=status or (422 if forms_ else 200)))


def _back() -> HttpResponse:
    return no_store(HttpResponseRedirect(reverse("web:members")))


@workspace_view(Role.ADMIN)
def members(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    return _page(request, access)


@require_POST
@workspace_view(Role.ADMIN)
def key_add(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    form = KeyForm(request.POST)
    if form.is_valid():
        try:
            created = api_key_create(
                workspace=access.current, name=form.cleaned_data["name"], scopes=form.cleaned_data["scopes"]
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            shown = ShownSecret(
                title=f"Key {created.api_key.name} created",
                label=f"API key {created.api_key.name}",
                value=created.secret,
                help="Copy it now: only its hash is kept, so it cannot be shown again. If it is lost, revoke it "
                "and create another. Agents send it as Authorization: Bearer <key>.",
            )
            return _page(request, access, shown=shown)
    return _page(request, access, key_form=form)


@require_POST
@workspace_view(Role.ADMIN)
def key_revoke(request: HttpRequest, access: WorkspaceAccess, key_id: int) -> HttpResponse:
    assert access.current is not None
    key = api_key_get(workspace=access.current, key_id=key_id)
    if key is None:
        raise Http404("No such key in this workspace.")
    api_key_revoke(api_key=key)
    messages.success(request, f"Key {key.name} revoked.")
    return _back()


@require_POST
@workspace_view(Role.ADMIN)
def invitation_add(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """A new invitation link with a role, shown once; the person it reaches joins by accepting it."""
    assert access.current is not None
    form = InvitationForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            created = invitation_create(
                workspace=access.current,
                role=data["role"],
                note=data["note"],
                days=data["days"],
                created_by=request.user,  # type: ignore[arg-type]  # signed in: workspace_view checked it
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            role = Role(created.invitation.role).label.lower()
            for_whom = f" for {created.invitation.note}" if created.invitation.note else ""
            shown = ShownSecret(
                title=f"Invitation link{for_whom}: {role}",
                label=f"Invitation link{for_whom}",
                value=request.build_absolute_uri(reverse("web:invitation", args=[created.token])),
                help=f"Copy it now and send it yourself: only its hash is kept. Whoever opens it signs up, or signs "
                f"in, and joins {access.current.name} as {role}; it works once, until "
                f"{created.invitation.expires_at:%Y-%m-%d %H:%M} UTC, and you can revoke it below.",
            )
            return _page(request, access, shown=shown)
    return _page(request, access, invitation_form=form)


@require_POST
@workspace_view(Role.ADMIN)
def invitation_remove(request: HttpRequest, access: WorkspaceAccess, invitation_id: int) -> HttpResponse:
    assert access.current is not None
    invitation = invitation_get(workspace=access.current, invitation_id=invitation_id)
    if invitation is None:
        raise Http404("No such invitation in this workspace.")
    try:
        invitation_revoke(invitation=invitation)
    except DomainError as exc:
        return _page(request, access, error=f"{exc.message} ({exc.code})", status=exc.status)
    messages.success(request, "Invitation revoked: its link no longer works.")
    return _back()


@require_POST
@workspace_view(Role.ADMIN)
def member_role(request: HttpRequest, access: WorkspaceAccess, membership_id: int) -> HttpResponse:
    """Change a member's role (members only: people join by invitation)."""
    assert access.current is not None
    membership = membership_get_by_id(workspace=access.current, membership_id=membership_id)
    if membership is None:
        raise Http404("No such member in this workspace.")
    form = RoleForm(request.POST)
    if not form.is_valid():
        return _page(request, access, error=f"Choose a role: {', '.join(Role.values)}.", status=422)
    try:
        membership_set(workspace=access.current, user=membership.user, role=form.cleaned_data["role"])
    except DomainError as exc:
        return _page(request, access, error=f"{exc.message} ({exc.code})", status=exc.status)
    messages.success(request, f"{membership.user.get_username()} is now {form.cleaned_data['role']} here.")
    return _back()


@require_POST
@workspace_view(Role.ADMIN)
def member_remove(request: HttpRequest, access: WorkspaceAccess, membership_id: int) -> HttpResponse:
    assert access.current is not None
    membership = membership_get_by_id(workspace=access.current, membership_id=membership_id)
    if membership is None:
        raise Http404("No such member in this workspace.")
    try:
        membership_remove(membership=membership)
    except DomainError as exc:
        return _page(request, access, error=f"{exc.message} ({exc.code})", status=exc.status)
    messages.success(request, f"{membership.user.get_username()} removed from the workspace.")
    return _back()
