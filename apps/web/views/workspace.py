"""Workspaces: switching (a POST with the CSRF token, then back to the page the person was on) and creating one."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError
from apps.web.forms.workspace import WorkspaceForm
from apps.web.secret_panel import ShownSecret, no_store
from apps.web.workspace_choice import may_create_workspace, workspace_switch
from apps.workspaces.services import workspace_create


@login_required
@require_POST
def switch(request: HttpRequest) -> HttpResponse:
    """Remember the chosen workspace; an unknown or forbidden slug changes nothing (404)."""
    chosen = workspace_switch(request=request, slug=request.POST.get("workspace", ""))
    if chosen is None:
        return HttpResponse("No such workspace.", status=404, content_type="text/plain")
    target = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False)
    # A page of one workspace's object (a layer, a profile) means nothing in another: go to its list.
    return HttpResponseRedirect(_area_root(target) if safe and target else reverse("web:dashboard"))


def _area_root(path: str) -> str:
    """`/layers/12/` → `/layers/`; `/preview/?layer=3` → `/preview/`; `/` stays."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    return f"/{parts[0]}/" if parts else "/"


@login_required
def create(request: HttpRequest) -> HttpResponse:
    """A new workspace with its company layer, its creator as admin, and a first API key shown once (the
    answer itself, `no-store`); the pages switch to it. Staff and superusers only: a workspace is a tenant."""
    user = request.user
    if not isinstance(user, AbstractBaseUser) or not may_create_workspace(user):
        raise PermissionDenied("Only staff members create workspaces; ask one, or a superuser, to make yours.")
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace, key = workspace_create(
                slug=form.cleaned_data["slug"], name=form.cleaned_data["name"], admin=user
            )
        except DomainError as exc:  # the slug taken concurrently since the check
            form.add_error("slug", exc.message)
        else:
            workspace_switch(request=request, slug=workspace.slug)
            shown = ShownSecret(
                title=f"Its first API key, {key.api_key.name}",
                label=f"API key {key.api_key.name} of {workspace.name}",
                value=key.secret,
                help="Copy it now: only its hash is kept, so it cannot be shown again (Keys and members makes "
                "more and revokes this one).",
                next_url=reverse("web:layers"),
                next_label=f"Continue to {workspace.name}'s layers",
            )
            context = {"created": workspace, "shown": shown, "crumbs": [("New workspace", None)]}
            return no_store(render(request, "web/workspace_created.html", context))
    status = 422 if form.errors else 200
    crumbs = [("New workspace", None)]
    return render(request, "web/workspace_new.html", {"form": form, "crumbs": crumbs}, status=status)
