"""The profiles area: list, create, edit and delete agent profiles (edits need an operator)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.errors import DomainError
from apps.profiles.models import AgentProfile
from apps.profiles.services import profile_create, profile_delete, profile_update
from apps.web.access import workspace_view
from apps.web.forms.profile import ProfileForm
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role


@workspace_view()
def profiles(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    rows = AgentProfile.objects.filter(workspace=access.current).order_by("name")
    return render(request, "web/profiles/list.html", {"profiles": rows, "crumbs": [("Profiles", None)]})


def _profile(access: WorkspaceAccess, name: str) -> AgentProfile:
    profile = AgentProfile.objects.filter(workspace=access.current, name=name).first()
    if profile is None:
        raise Http404("No such profile in this workspace.")
    return profile


def _page(request: HttpRequest, form: ProfileForm, profile: AgentProfile | None, status: int = 200) -> HttpResponse:
    title = profile.name if profile else "New profile"
    crumbs = [("Profiles", reverse("web:profiles")), (title, None)]
    context = {"form": form, "profile": profile, "crumbs": crumbs}
    return render(request, "web/profiles/detail.html", context, status=status)


@require_http_methods(["GET", "POST"])
@workspace_view()
def profile(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    """A profile's settings; an operator's POST saves them (every error beside its field, 422)."""
    current = _profile(access, name)
    if request.method != "POST":
        return _page(request, ProfileForm(initial=ProfileForm.initial_of(current)), current)
    if not access.can_edit:
        raise PermissionDenied("Only operators may change profiles.")
    form = ProfileForm(request.POST)
    if form.is_valid():
        try:
            saved = profile_update(profile=current, name=form.cleaned_data["name"], data=form.profile_input())
        except DomainError as exc:
            form.add_error("name" if exc.code == "duplicate_profile" else None, exc.message)
        else:
            messages.success(request, f"Profile {saved.name} saved.")
            return HttpResponseRedirect(reverse("web:profile", args=[saved.name]))
    return _page(request, form, current, status=422)


@require_http_methods(["GET", "POST"])
@workspace_view(Role.OPERATOR)
def profile_new(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    if request.method != "POST":
        return _page(request, ProfileForm(initial={"preferred_format": "markdown", "safety_margin": 0.15}), None)
    form = ProfileForm(request.POST)
    if form.is_valid():
        try:
            saved = profile_create(workspace=access.current, name=form.cleaned_data["name"], data=form.profile_input())
        except DomainError as exc:
            form.add_error("name" if exc.code == "duplicate_profile" else None, exc.message)
        else:
            messages.success(request, f"Profile {saved.name} created.")
            return HttpResponseRedirect(reverse("web:profile", args=[saved.name]))
    return _page(request, form, None, status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def profile_remove(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    current = _profile(access, name)
    profile_delete(profile=current)
    messages.success(request, f"Profile {name} deleted; requests that name it fall back to the defaults.")
    return HttpResponseRedirect(reverse("web:profiles"))
