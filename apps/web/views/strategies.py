"""The strategies area: the workspace's strategies, most helpful first, filtered by task group and agent
type; operators add one, edit or delete it and give it feedback (helpful or not), as agents do through
`/api/v1/strategies/`. Every rule is the items' validator (apps/web/forms/strategy.py)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.consumption.selectors import strategies_list, strategy_get
from apps.consumption.services import strategy_create, strategy_delete, strategy_feedback, strategy_update
from apps.core.errors import DomainError, NotFound
from apps.core.htmx import render_page_or_partial
from apps.layers.models import Item
from apps.layers.selectors import layer_get
from apps.web.access import workspace_view
from apps.web.forms.strategy import StrategyEditForm, StrategyNewForm
from apps.web.layer_tree import layer_rows
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

LIST = "web/strategies/list.html"


def _list_context(request: HttpRequest, access: WorkspaceAccess, form: StrategyNewForm | None) -> dict[str, Any]:
    assert access.current is not None
    group_id = request.GET.get("group", "").strip()[:200]
    agent_type = request.GET.get("agent_type", "").strip()[:100]
    rows = strategies_list(workspace=access.current, group_id=group_id, agent_type=agent_type).select_related("layer")
    page = Paginator(rows, 50).get_page(request.GET.get("page", "1"))
    if form is None and access.can_edit:
        form = StrategyNewForm(layers=layer_rows(workspace=access.current))
    return {
        "page": page,
        "group": group_id,
        "agent_type": agent_type,
        "form": form,
        "crumbs": [("Strategies", None)],
    }


@require_http_methods(["GET", "POST"])
@workspace_view()
def strategies(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The list; a POST (operators) adds a strategy, every error beside its field (422, nothing saved)."""
    assert access.current is not None
    if request.method != "POST":
        return render(request, LIST, _list_context(request, access, None))
    if not access.can_edit:
        raise PermissionDenied("Only operators may add strategies.")
    form = StrategyNewForm(request.POST, layers=layer_rows(workspace=access.current))
    if form.is_valid():
        try:
            layer = layer_get(workspace=access.current, layer_id=form.cleaned_data["layer"])
            made = strategy_create(layer=layer, fields=form.fields_of(), helpfulness=form.cleaned_data["helpfulness"])
        except DomainError as exc:  # the layer deleted meanwhile, the request's content limit
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Strategy {made.pk} added.")
            return HttpResponseRedirect(reverse("web:strategy", args=[made.pk]))
    return render(request, LIST, _list_context(request, access, form), status=422)


def _strategy(access: WorkspaceAccess, strategy_id: int) -> Item:
    assert access.current is not None
    try:
        return strategy_get(workspace=access.current, strategy_id=strategy_id)
    except NotFound as exc:
        raise Http404("No such strategy in this workspace.") from exc


def _detail(request: HttpRequest, strategy: Item, form: StrategyEditForm, status: int = 200) -> HttpResponse:
    crumbs = [("Strategies", reverse("web:strategies")), (f"Strategy {strategy.pk}", None)]
    context = {"strategy": strategy, "form": form, "crumbs": crumbs}
    return render_page_or_partial(request, "web/strategies/detail.html", "helpfulness", context, status=status)


@require_http_methods(["GET", "POST"])
@workspace_view()
def strategy(request: HttpRequest, access: WorkspaceAccess, strategy_id: int) -> HttpResponse:
    current = _strategy(access, strategy_id)
    if request.method != "POST":
        return _detail(request, current, StrategyEditForm(strategy=current))
    if not access.can_edit:
        raise PermissionDenied("Only operators may change strategies.")
    form = StrategyEditForm(request.POST, strategy=current)
    if form.is_valid():
        try:
            strategy_update(strategy=current, changes=form.fields_of())
        except DomainError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Strategy {current.pk} saved.")
            return HttpResponseRedirect(reverse("web:strategy", args=[current.pk]))
    return _detail(request, current, form, status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def feedback(request: HttpRequest, access: WorkspaceAccess, strategy_id: int) -> HttpResponse:
    """Helpful or not, one step of STRATEGY_FEEDBACK_STEP; htmx swaps the helpfulness region."""
    assert access.current is not None
    current = _strategy(access, strategy_id)
    helpful = request.POST.get("helpful") == "true"
    updated = strategy_feedback(workspace=access.current, strategy_id=current.pk, helpful=helpful)
    if not request.htmx:  # type: ignore[attr-defined]
        messages.success(request, f"Feedback recorded: helpfulness {updated.helpfulness:.2f}.")
        return HttpResponseRedirect(reverse("web:strategy", args=[current.pk]))
    return _detail(request, updated, StrategyEditForm(strategy=updated))


@require_POST
@workspace_view(Role.OPERATOR)
def strategy_remove(request: HttpRequest, access: WorkspaceAccess, strategy_id: int) -> HttpResponse:
    current = _strategy(access, strategy_id)
    strategy_delete(strategy=current)
    messages.success(request, f"Strategy {strategy_id} deleted.")
    return HttpResponseRedirect(reverse("web:strategies"))
