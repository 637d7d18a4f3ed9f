"""The layers area: the tree, a layer's page, and the operator's edits there."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError
from apps.core.htmx import render_page_or_partial
from apps.layers.models import ITEM_TYPES, Item, ItemKind, Layer
from apps.layers.services import ItemInput, item_delete, items_create, layer_create, layer_delete
from apps.summaries.config import config_of, config_update
from apps.summaries.services import layer_summarize
from apps.web.access import workspace_view
from apps.web.forms.layer import ChildLayerForm, ItemForm, LayerConfigForm
from apps.web.layer_tree import layer_rows
from apps.web.selectors.layers import (
    ItemFilter,
    layer_ancestors,
    layer_children,
    layer_figures,
    layer_items,
    layer_summary_rows,
)
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

PAGE = "web/layers/detail.html"


@workspace_view()
def tree(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The current workspace's layers as an indented tree with item counts (one query)."""
    assert access.current is not None
    rows = layer_rows(workspace=access.current)
    return render(request, "web/layers/tree.html", {"rows": rows, "crumbs": [("Layers", None)]})


def _layer(access: WorkspaceAccess, layer_id: int) -> Layer:
    layer = Layer.objects.filter(workspace=access.current, pk=layer_id).select_related("parent").first()
    if layer is None:
        raise Http404("No such layer in this workspace.")
    return layer


def _context(request: HttpRequest, access: WorkspaceAccess, layer: Layer, **forms: Any) -> dict[str, Any]:
    assert access.current is not None
    filters = ItemFilter(
        q=request.GET.get("q", "").strip(),
        kind=request.GET.get("kind", ""),
        type=request.GET.get("type", ""),
        page=request.GET.get("page", "1"),
    )
    ancestors = layer_ancestors(layer=layer)
    crumbs: list[tuple[str, str | None]] = [("Layers", reverse("web:layers"))]
    crumbs += [(a.name, reverse("web:layer", args=[a.pk])) for a in ancestors] + [(layer.name, None)]
    config = config_of(layer=layer)
    return {
        "layer": layer,
        "crumbs": crumbs,
        "children": layer_children(layer=layer),
        "figures": layer_figures(layer=layer),
        "items": layer_items(workspace=access.current, layer=layer, filters=filters),
        "filters": filters,
        "kinds": ItemKind.choices,
        "types": sorted({t for types in ITEM_TYPES.values() for t in types if t}),
        "summaries": layer_summary_rows(layer=layer),
        "config": config,
        "config_form": forms.get("config_form")
        or LayerConfigForm(initial=LayerConfigForm.initial_of(config), layer=layer),
        "item_form": forms.get("item_form") or ItemForm(),
        "child_form": forms.get("child_form") or ChildLayerForm(),
    }


@workspace_view()
def detail(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Items (search, kind and type filters, pages), summaries, configuration and children of one layer."""
    layer = _layer(access, layer_id)
    return render_page_or_partial(request, PAGE, "items", _context(request, access, layer))


@require_POST
@workspace_view(Role.OPERATOR)
def config_save(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Save the summary triggers; every error shows at once beside its field (422, nothing saved)."""
    layer = _layer(access, layer_id)
    form = LayerConfigForm(request.POST, layer=layer)
    if form.is_valid():
        config_update(layer=layer, changes=form.changes())
        messages.success(request, "Summary configuration saved.")
        if request.htmx:  # type: ignore[attr-defined]
            form = LayerConfigForm(initial=LayerConfigForm.initial_of(config_of(layer=layer)), layer=layer)
            context = {**_context(request, access, layer, config_form=form), "saved": True}
            return render_page_or_partial(request, PAGE, "config", context)
        return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))
    return render_page_or_partial(
        request, PAGE, "config", _context(request, access, layer, config_form=form), status=422
    )


@require_POST
@workspace_view(Role.OPERATOR)
def summarize(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    layer = _layer(access, layer_id)
    result = layer_summarize(layer=layer, force=True)
    messages.success(request, f"Summaries {result.status} ({result.provider or 'no provider'}).")
    return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def item_add(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    layer = _layer(access, layer_id)
    form = ItemForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            items_create(
                layer=layer,
                items=[
                    ItemInput(
                        kind=data["kind"],
                        type=data["type"],
                        title=data["title"],
                        content=data["content"],
                        pinned=data["pinned"],
                        role="user" if data["kind"] == "message" else "",
                    )
                ],
            )
        except DomainError as exc:
            form.add_error(None, f"{exc.message} ({exc.code})")
        else:
            messages.success(request, "Item added; it is searchable by keyword now and by meaning once embedded.")
            return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))
    return render(request, PAGE, _context(request, access, layer, item_form=form), status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def item_remove(request: HttpRequest, access: WorkspaceAccess, layer_id: int, item_id: int) -> HttpResponse:
    layer = _layer(access, layer_id)
    item = Item.objects.filter(workspace=access.current, layer=layer, pk=item_id).select_related("layer").first()
    if item is None:
        raise Http404("No such item in this layer.")
    item_delete(item=item)
    messages.success(request, "Item deleted.")
    return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def child_add(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    assert access.current is not None
    layer = _layer(access, layer_id)
    form = ChildLayerForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            child = layer_create(
                workspace=access.current,
                kind=data["kind"],
                name=data["name"],
                parent=layer,
                external_id=data["external_id"] or None,
            )
        except DomainError as exc:
            form.add_error(None, f"{exc.message} ({exc.code})")
        else:
            messages.success(request, f"Layer {child.name} created.")
            return HttpResponseRedirect(reverse("web:layer", args=[child.pk]))
    return render(request, PAGE, _context(request, access, layer, child_form=form), status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def remove(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    layer = _layer(access, layer_id)
    parent_id = layer.parent_id
    try:
        layer_delete(layer=layer)
    except DomainError as exc:
        messages.error(request, exc.message)
        return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))
    messages.success(request, f"Layer {layer.name} deleted with its items and sub-layers.")
    return HttpResponseRedirect(reverse("web:layer", args=[parent_id]) if parent_id else reverse("web:layers"))
