"""The workspace's API keys and members: workspace admins only (a superuser is admin everywhere)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError
from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import ApiKey, Membership, Role, Scope
from apps.workspaces.services import api_key_create, api_key_revoke, membership_remove, membership_set


class KeyForm(forms.Form):
    name = forms.CharField(max_length=100, label="Key name")
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, initial=[Scope.READ, Scope.WRITE]
    )


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)


def _page(
    request: HttpRequest, access: WorkspaceAccess, *, error: str = "", status: int = 0, **forms_: forms.Form
) -> HttpResponse:
    """The page; with a form that failed (422) or an `error` refused by a service (its `status`)."""
    context = {
        "error": error,
        "keys": ApiKey.objects.filter(workspace=access.current).order_by("-created_at"),
        "members": Membership.objects.filter(workspace=access.current)
        .select_related("user")
        .order_by("user__username"),
        "roles": Role.choices,
        "key_form": forms_.get("key_form") or KeyForm(),
        "member_form": forms_.get("member_form") or MemberForm(),
        "crumbs": [("Keys and members", None)],
    }
    return render(request, "web/members/page.html", context, status=status or (422 if forms_ else 200))


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
            messages.warning(
                request, f"Key {created.api_key.name} created. Copy it now, it is shown once: {created.secret}"
            )
            return HttpResponseRedirect(reverse("web:members"))
    return _page(request, access, key_form=form)


@require_POST
@workspace_view(Role.ADMIN)
def key_revoke(request: HttpRequest, access: WorkspaceAccess, key_id: int) -> HttpResponse:
    key = ApiKey.objects.filter(workspace=access.current, pk=key_id).first()
    if key is None:
        raise Http404("No such key in this workspace.")
    api_key_revoke(api_key=key)
    messages.success(request, f"Key {key.name} revoked.")
    return HttpResponseRedirect(reverse("web:members"))


@require_POST
@workspace_view(Role.ADMIN)
def member_set(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """Add a member by username, or change a member's role."""
    assert access.current is not None
    form = MemberForm(request.POST)
    if form.is_valid():
        user = get_user_model().objects.filter(username=form.cleaned_data["username"]).first()
        if user is None:
            form.add_error(
                "username", "No user has this username (create it with manage.py createsuperuser or the admin)."
            )
        else:
            try:
                membership_set(workspace=access.current, user=user, role=form.cleaned_data["role"])
            except DomainError as exc:
                form.add_error("role", f"{exc.message} ({exc.code})")
            else:
                messages.success(request, f"{user.get_username()} is now {form.cleaned_data['role']} here.")
                return HttpResponseRedirect(reverse("web:members"))
    return _page(request, access, member_form=form)


@require_POST
@workspace_view(Role.ADMIN)
def member_remove(request: HttpRequest, access: WorkspaceAccess, membership_id: int) -> HttpResponse:
    membership = Membership.objects.filter(workspace=access.current, pk=membership_id).select_related("user").first()
    if membership is None:
        raise Http404("No such member in this workspace.")
    try:
        membership_remove(membership=membership)
    except DomainError as exc:
        return _page(request, access, error=f"{exc.message} ({exc.code})", status=exc.status)
    messages.success(request, f"{membership.user.get_username()} removed from the workspace.")
    return HttpResponseRedirect(reverse("web:members"))
