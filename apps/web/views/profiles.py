"""The profiles area: list, create, edit and delete agent profiles (edits need an operator), "try it"
with the unsaved settings and "compare with" another profile (any member: they save nothing).

The creation page is `/profiles/+new/`: `+` is not allowed in a profile name, so it can never hide a
profile (a profile named `new` lives at `/profiles/new/` like any other).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.core.errors import DomainError, NotFound
from apps.core.htmx import render_page_or_partial
from apps.profiles.errors import DUPLICATE_PROFILE
from apps.profiles.models import AgentProfile
from apps.profiles.selectors import profile_get, profile_settings, profiles_list
from apps.profiles.services import ProfileInput, profile_create, profile_delete, profile_update
from apps.web.access import workspace_view
from apps.web.forms.profile import ProfileForm
from apps.web.forms.profile_trial import TRY_PREFIX, CompareForm, TrialRequestForm
from apps.web.layer_tree import LayerRow, layer_rows
from apps.web.selectors.profile_trial import Comparison, Contender, profiles_compare
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

DETAIL = "web/profiles/detail.html"
COMPARE_IDS = "compare-%s"  # the compare form sits beside the settings form: its ids must differ
# Where the service's refusal of a trial request belongs on the form.
TRIAL_ERROR_FIELDS = {"invalid_token_budget": "token_budget", "layer_not_found": "layer"}


@workspace_view(replica=True)
def profiles(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    rows = profiles_list(workspace=access.current)
    return render(request, "web/profiles/list.html", {"profiles": rows, "crumbs": [("Profiles", None)]})


def _profile(access: WorkspaceAccess, name: str) -> AgentProfile:
    assert access.current is not None
    try:
        return profile_get(workspace=access.current, name=name)
    except NotFound as exc:
        raise Http404("No such profile in this workspace.") from exc


def _others(access: WorkspaceAccess, profile: AgentProfile) -> list[str]:
    assert access.current is not None
    rows = profiles_list(workspace=access.current).exclude(pk=profile.pk)
    return list(rows.values_list("name", flat=True))


def _initial_request(layers: list[LayerRow]) -> dict[str, Any]:
    return {"layer": layers[0].id} if layers else {}


NEW_INITIAL = {"preferred_format": "markdown", "safety_margin": 0.15}


def _detail(
    request: HttpRequest,
    access: WorkspaceAccess,
    profile: AgentProfile | None,
    *,
    form: ProfileForm | None = None,
    try_form: TrialRequestForm | None = None,
    compare_form: CompareForm | None = None,
    layers: list[LayerRow] | None = None,
    **more: Any,
) -> dict[str, Any]:
    """Everything the profile page (or the creation page: `profile` None) shows; forms not given
    start from the saved profile."""
    assert access.current is not None
    if layers is None:
        layers = layer_rows(workspace=access.current)
    if try_form is None:
        try_form = TrialRequestForm(prefix=TRY_PREFIX, layers=layers, initial=_initial_request(layers))
    if compare_form is None and profile is not None:
        others = _others(access, profile)
        first = {"other": others[0]} if others else {}
        initial = {**_initial_request(layers), **first}
        compare_form = CompareForm(layers=layers, others=others, auto_id=COMPARE_IDS, initial=initial)
    if form is None:
        form = ProfileForm(initial=ProfileForm.initial_of(profile) if profile else NEW_INITIAL)
    title = profile.name if profile else "New profile"
    return {
        "form": form,
        "profile": profile,
        "crumbs": [("Profiles", reverse("web:profiles")), (title, None)],
        "try_form": try_form,
        "try_url": reverse("web:profile-try", args=[profile.name]) if profile else reverse("web:profile-new-try"),
        "compare_form": compare_form,
        **more,
    }


@require_http_methods(["GET", "POST"])
@workspace_view(replica=True)
def profile(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    """A profile's settings; an operator's POST saves them (every error beside its field, 422)."""
    assert access.current is not None
    named_new = profiles_list(workspace=access.current).filter(name=name)
    if name == "new" and request.method == "GET" and not named_new.exists():
        return HttpResponseRedirect(reverse("web:profile-new"))  # the creation page's old address
    current = _profile(access, name)
    if request.method != "POST":
        return render(request, DETAIL, _detail(request, access, current))
    if not access.can_edit:
        raise PermissionDenied("Only operators may change profiles.")
    form = ProfileForm(request.POST)
    if form.is_valid():
        try:
            saved = profile_update(profile=current, name=form.cleaned_data["name"], data=form.profile_input())
        except DomainError as exc:
            form.add_error("name" if exc.code == DUPLICATE_PROFILE.code else None, exc.message)
        else:
            messages.success(request, f"Profile {saved.name} saved.")
            return HttpResponseRedirect(reverse("web:profile", args=[saved.name]))
    return render(request, DETAIL, _detail(request, access, current, form=form, attempt="save"), status=422)


def _try(request: HttpRequest, access: WorkspaceAccess, current: AgentProfile | None) -> HttpResponse:
    """The query run with the form's values (B) and with the saved profile's, or the defaults (A)."""
    workspace = access.current
    assert workspace is not None
    layers = layer_rows(workspace=workspace)
    form = ProfileForm(request.POST)
    try_form = TrialRequestForm(request.POST, prefix=TRY_PREFIX, layers=layers)
    trial: Comparison | None = None
    status = 422
    if form.is_valid() and try_form.is_valid():
        name = current.name if current else form.cleaned_data["name"]
        draft = form.profile_input()
        # A new profile is tried against the defaults at its own budget and model: against the
        # defaults' 8,000 tokens, a 1,000-token profile "removed" everything past its budget and
        # said nothing about its weights, format or filters (issue 19).
        saved = profile_settings(profile=current) if current else _defaults_like(draft)
        params = try_form.params(profile=name)  # None: the API's serializer refused it (the error is on the form)
        try:
            if params is not None:
                trial = profiles_compare(
                    workspace=workspace,
                    params=params,
                    a=Contender("saved" if current else "defaults", name, draft=saved),
                    b=Contender("these settings", name, draft=draft),
                )
                status = 200
        except DomainError as exc:
            try_form.add_error(TRIAL_ERROR_FIELDS.get(exc.code), f"{exc.message} ({exc.code})")
    context = _detail(request, access, current, form=form, try_form=try_form, layers=layers, trial=trial, attempt="try")
    return render_page_or_partial(request, DETAIL, "editor", context, status=status)


def _defaults_like(draft: ProfileInput) -> ProfileInput:
    """The default settings with `draft`'s budget, model and window: what a new profile changes
    beyond how much room it asks for."""
    return ProfileInput(model=draft.model, context_window=draft.context_window, token_budget=draft.token_budget)


@require_POST
@workspace_view()
def profile_try(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    """The query previewed with the form's values, saved or not, beside the saved profile's answer.

    Saves nothing and records nothing, so a viewer may try too. HTMX gets the form back (#profile-form:
    the settings with their errors and the result); a plain POST the whole page.
    """
    return _try(request, access, _profile(access, name))


@require_POST
@workspace_view(Role.OPERATOR)
def profile_new_try(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The creation page's "try it": the new profile's values beside the defaults (no profile)."""
    return _try(request, access, None)


@require_GET
@workspace_view()
def profile_compare(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    """This profile (A) and another (B) on the same request: both answers, B's chunks added and removed.

    The request is in the URL, so a reload or a shared link shows the same comparison. Both sides
    run on the saved settings and are recorded like any preview.
    """
    workspace = access.current
    assert workspace is not None
    current = _profile(access, name)
    if request.GET.get("other"):
        _profile(access, request.GET["other"])  # another workspace's profile is a 404, not a form error
    layers = layer_rows(workspace=workspace)
    form = CompareForm(request.GET, layers=layers, others=_others(access, current), auto_id=COMPARE_IDS)
    comparison: Comparison | None = None
    status = 422
    if form.is_valid():
        other = form.cleaned_data["other"]
        params = form.params(profile=current.name)  # None: the API's serializer refused it (the error is on the form)
        try:
            if params is not None:
                comparison = profiles_compare(
                    workspace=workspace,
                    params=params,
                    a=Contender(current.name, current.name),
                    b=Contender(other, other),
                )
                status = 200
        except DomainError as exc:
            form.add_error(TRIAL_ERROR_FIELDS.get(exc.code), f"{exc.message} ({exc.code})")
    context = _detail(request, access, current, compare_form=form, comparison=comparison)
    return render_page_or_partial(request, DETAIL, "compare", context, status=status)


@require_http_methods(["GET", "POST"])
@workspace_view(Role.OPERATOR)
def profile_new(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    if request.method != "POST":
        return render(request, DETAIL, _detail(request, access, None))
    form = ProfileForm(request.POST)
    if form.is_valid():
        try:
            saved = profile_create(workspace=access.current, name=form.cleaned_data["name"], data=form.profile_input())
        except DomainError as exc:
            form.add_error("name" if exc.code == DUPLICATE_PROFILE.code else None, exc.message)
        else:
            messages.success(request, f"Profile {saved.name} created.")
            return HttpResponseRedirect(reverse("web:profile", args=[saved.name]))
    return render(request, DETAIL, _detail(request, access, None, form=form, attempt="save"), status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def profile_remove(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    current = _profile(access, name)
    profile_delete(profile=current)
    messages.success(request, f"Profile {name} deleted; requests that name it fall back to the defaults.")
    return HttpResponseRedirect(reverse("web:profiles"))
