"""The preview's chunk actions: pin (or unpin) an item, exclude it from the request's agent profile (or
let it in again), lower its importance by a step.

Each is a POST (CSRF) for operators and above, on an item of the current workspace (another's is a
404), through the owning app's service (layers, profiles). Its query string is the preview's request
(the page's address), so the same preview is assembled again right after and the person sees the
effect: HTMX gets #preview-result and the sentence saying what was done, swapped into the page's
#chunk-action-status (a live region, so a screen reader says it); a plain POST is redirected to the
preview with that sentence as a message.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.assembly.deadline import AssemblyCancelled
from apps.core.client_gone import CLIENT_CLOSED_REQUEST
from apps.core.errors import DomainError, NotFound
from apps.core.htmx import is_htmx
from apps.layers.models import Item
from apps.layers.selectors import item_get
from apps.layers.services import item_importance_lower, item_update
from apps.profiles.selectors import profile_get
from apps.profiles.services import profile_item_exclude
from apps.web.access import workspace_view
from apps.web.layer_tree import layer_rows
from apps.web.views.preview import preview_assemble
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

# "Lower importance" takes this much off (importance is in [0, 1], 0.5 by default): two clicks from the
# default to 0. At the default weights (engine/rank.py, importance 0.1 of 0.95) a step moves a score by
# about 0.026, enough to reorder close candidates without burying a relevant one.
IMPORTANCE_STEP = 0.25
ACTION_TEMPLATE = "web/preview/action.html"


def _item(access: WorkspaceAccess, item_id: int) -> Item:
    assert access.current is not None
    try:
        return item_get(workspace=access.current, item_id=item_id)
    except NotFound as exc:
        raise Http404("No such item in this workspace.") from exc


def _label(item: Item) -> str:
    return f"{item.kind} #{item.pk}"


@require_POST
@workspace_view(Role.OPERATOR)
def item_pin(request: HttpRequest, access: WorkspaceAccess, item_id: int) -> HttpResponse:
    """Pin the item (`pinned=0`: unpin it), then assemble the preview again."""
    item = _item(access, item_id)
    pinned = request.POST.get("pinned", "1") != "0"
    try:
        item_update(item=item, changes={"pinned": pinned})
    except DomainError as exc:
        return _done(request, access, item_id, f"Not pinned: {exc.message} ({exc.code})", status=422)
    if pinned:
        said = f"Pinned {_label(item)}: it goes first in every context of {item.layer.name} while it fits."
    else:
        said = f"Unpinned {_label(item)}: its score places it again."
    return _done(request, access, item_id, said)


@require_POST
@workspace_view(Role.OPERATOR)
def item_exclude(request: HttpRequest, access: WorkspaceAccess, item_id: int) -> HttpResponse:
    """Exclude the item from the preview's agent profile (`excluded=0`: let it in again), then assemble again."""
    assert access.current is not None
    item = _item(access, item_id)
    try:
        profile = profile_get(workspace=access.current, name=request.GET.get("profile", ""))
    except NotFound as exc:
        raise Http404("Pick an agent profile of this workspace first.") from exc
    excluded = request.POST.get("excluded", "1") != "0"
    try:
        profile_item_exclude(profile=profile, item=item, excluded=excluded)
    except DomainError as exc:
        return _done(request, access, item_id, f"Not excluded: {exc.message} ({exc.code})", status=422)
    if excluded:
        said = f"Excluded {_label(item)} from profile {profile.name}: its contexts leave it out (see Left out)."
    else:
        said = f"{_label(item).capitalize()} is in the contexts of profile {profile.name} again."
    return _done(request, access, item_id, said)


@require_POST
@workspace_view(Role.OPERATOR)
def item_lower(request: HttpRequest, access: WorkspaceAccess, item_id: int) -> HttpResponse:
    """Lower the item's importance by IMPORTANCE_STEP (not below 0), then assemble again."""
    item = _item(access, item_id)
    before = item.importance
    if before <= 0:
        return _done(request, access, item_id, f"The importance of {_label(item)} is 0 already, the lowest.")
    try:
        item = item_importance_lower(item=item, step=IMPORTANCE_STEP)
    except DomainError as exc:
        return _done(request, access, item_id, f"Not lowered: {exc.message} ({exc.code})", status=422)
    said = f"Lowered the importance of {_label(item)} from {before:.2f} to {item.importance:.2f}, for every profile."
    return _done(request, access, item_id, said)


def _done(request: HttpRequest, access: WorkspaceAccess, item_id: int, said: str, *, status: int = 200) -> HttpResponse:
    """The preview assembled again with `said` announced (HTMX), or back to it with a message."""
    workspace = access.current
    assert workspace is not None
    if not is_htmx(request):
        (messages.success if status == 200 else messages.error)(request, said)
        return HttpResponseRedirect(f"{reverse('web:preview')}?{request.GET.urlencode()}")
    try:
        form, view = preview_assemble(request, workspace=workspace, rows=layer_rows(workspace=workspace))
    except AssemblyCancelled:
        return HttpResponse(status=CLIENT_CLOSED_REQUEST)
    context = {"form": form, "view": view, "announcement": said, "acted_on": item_id}
    return render(request, ACTION_TEMPLATE, context, status=status)
