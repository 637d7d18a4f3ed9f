"""The layers area: the tree, a layer's page, and the operator's edits there."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError, NotFound
from apps.core.htmx import is_htmx, render_page_or_partial
from apps.layers.errors import DUPLICATE_EXTERNAL_ID
from apps.layers.models import Item, ItemKind, Layer
from apps.layers.relationships import relationship_create, relationship_delete
from apps.layers.selectors import (
    item_get,
    layer_ancestors,
    layer_children,
    layer_get,
    relationship_get,
)
from apps.layers.services import item_delete, item_update, items_create, layer_create, layer_delete, layer_update
from apps.summaries.config import config_of, config_update
from apps.summaries.jobs import layer_summarize_request
from apps.web.access import workspace_view
from apps.web.forms.item import ItemEditForm, RelationshipForm
from apps.web.forms.layer import ChildLayerForm, ItemForm, LayerConfigForm, LayerEditForm
from apps.web.layer_tree import layer_rows
from apps.web.selectors.layers import (
    ItemFilter,
    layer_figures,
    layer_item,
    layer_item_page,
    layer_item_types,
    layer_items,
    layer_proposals,
    layer_summary_rows,
)
from apps.web.views.supersessions import DECISIONS, decide
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

PAGE = "web/layers/detail.html"


@workspace_view(replica=True)
def tree(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The current workspace's layers as an indented tree with item counts (one query)."""
    assert access.current is not None
    rows = layer_rows(workspace=access.current)
    return render(request, "web/layers/tree.html", {"rows": rows, "crumbs": [("Layers", None)]})


def _layer(access: WorkspaceAccess, layer_id: int) -> Layer:
    assert access.current is not None
    try:
        return layer_get(workspace=access.current, layer_id=layer_id, with_parent=True)
    except NotFound as exc:
        raise Http404("No such layer in this workspace.") from exc


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
        "proposals": layer_proposals(workspace=access.current, layer=layer),
        "filters": filters,
        "kinds": ItemKind.choices,
        "types": layer_item_types(layer=layer),
        "summaries": layer_summary_rows(layer=layer),
        "config": config,
        "config_form": forms.get("config_form")
        or LayerConfigForm(initial=LayerConfigForm.initial_of(config), layer=layer),
        "item_form": forms.get("item_form") or ItemForm(),
        "child_form": forms.get("child_form") or ChildLayerForm(parent=layer),
        "layer_form": forms.get("layer_form")
        or LayerEditForm(initial={"name": layer.name, "external_id": layer.external_id or ""}),
    }


@workspace_view(replica=True)
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
    result = layer_summarize_request(layer=layer).result
    messages.success(request, f"Summaries {result.status} ({result.provider or 'no provider'}).")
    return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def item_add(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    layer = _layer(access, layer_id)
    form = ItemForm(request.POST)
    if form.is_valid():
        try:
            items_create(layer=layer, items=[form.item_input()])
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
    assert access.current is not None
    try:
        item = item_get(workspace=access.current, item_id=item_id)
    except NotFound as exc:
        raise Http404("No such item in this layer.") from exc
    if item.layer_id != layer.pk:
        raise Http404("No such item in this layer.")
    item_delete(item=item)
    messages.success(request, "Item deleted.")
    return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def child_add(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    assert access.current is not None
    layer = _layer(access, layer_id)
    form = ChildLayerForm(request.POST, parent=layer)
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


def _item(access: WorkspaceAccess, layer: Layer, item_id: int) -> Item:
    """The item as its row shows it; 404 when it is not this layer's (so not another workspace's)."""
    assert access.current is not None
    item = layer_item(workspace=access.current, layer=layer, item_id=item_id)
    if item is None:
        raise Http404("No such item in this layer.")
    item.layer = layer
    return item


@workspace_view()
def item_row(request: HttpRequest, access: WorkspaceAccess, layer_id: int, item_id: int) -> HttpResponse:
    """One item's row: what "Cancel" in the inline editor swaps back."""
    layer = _layer(access, layer_id)
    item = _item(access, layer, item_id)
    if not is_htmx(request):  # the item's own link (trace, preview): the layer's page that lists it
        assert access.current is not None
        number = layer_item_page(workspace=access.current, layer=layer, item=item)
        page = f"?page={number}" if number > 1 else ""
        return HttpResponseRedirect(f"{reverse('web:layer', args=[layer.pk])}{page}#item-{item.pk}")
    # `watch`: a row saved with new text asks again every few seconds until its embedding is there.
    watch = "watch" in request.GET
    # Cancel puts the focus back on the row's Edit link; a poll never moves it.
    return render(request, f"{PAGE}#item_row", {"layer": layer, "item": item, "watch": watch, "refocus": not watch})


@workspace_view(Role.OPERATOR)
def item_edit(request: HttpRequest, access: WorkspaceAccess, layer_id: int, item_id: int) -> HttpResponse:
    """The inline editor (GET), or save it (POST): the row comes back, or the editor with every error (422)."""
    layer = _layer(access, layer_id)
    item = _item(access, layer, item_id)
    if request.method != "POST":
        return _editor(request, access, layer, item, ItemEditForm(item=item))
    form = ItemEditForm(request.POST, item=item)
    if form.is_valid():
        try:
            item_update(item=item, changes=form.changes())
        except DomainError as exc:  # a concurrent edit took the external id since the check
            form.add_error(None, f"{exc.message} ({exc.code})")
        else:
            if not is_htmx(request):
                messages.success(request, "Item saved.")
                return HttpResponseRedirect(f"{reverse('web:layer', args=[layer.pk])}#item-{item.pk}")
            saved = _item(access, layer, item.pk)
            context = {"layer": layer, "item": saved, "saved": True, "watch": True, "refocus": True}
            return render(request, f"{PAGE}#item_row", context)
    return _editor(request, access, layer, item, form, status=422)


def _editor(
    request: HttpRequest, access: WorkspaceAccess, layer: Layer, item: Item, form: ItemEditForm, *, status: int = 200
) -> HttpResponse:
    """The editor in the item's row: the row alone for HTMX, else the whole page with the row open."""
    assert access.current is not None
    relation_form = RelationshipForm(item=item, workspace=access.current)
    context = {"layer": layer, "item": item, "edit_form": form, "relation_form": relation_form}
    if is_htmx(request):
        return render(request, f"{PAGE}#item_edit", context, status=status)
    return _page_with_editor(request, access, layer, context, status=status)


def _page_with_editor(
    request: HttpRequest, access: WorkspaceAccess, layer: Layer, context: dict[str, Any], *, status: int
) -> HttpResponse:
    """Without HTMX: the whole layer page, the item's row open for editing (first, if not on this page)."""
    page_context = {**_context(request, access, layer), **context}
    rows = page_context["items"].object_list
    if all(row.pk != context["item"].pk for row in rows):
        rows.insert(0, context["item"])
    return render(request, PAGE, page_context, status=status)


def _relations(
    request: HttpRequest, access: WorkspaceAccess, layer: Layer, item_id: int, form: RelationshipForm | None = None
) -> HttpResponse:
    """The editor's relationships box (HTMX), or back to the page; 422 with the form's errors."""
    assert access.current is not None
    item = _item(access, layer, item_id)
    if not is_htmx(request) and form is None:
        return HttpResponseRedirect(f"{reverse('web:layer-item-edit', args=[layer.pk, item.pk])}")
    status = 422 if form is not None else 200
    form = form or RelationshipForm(item=item, workspace=access.current)
    context = {"layer": layer, "item": item, "relation_form": form}
    if is_htmx(request):
        return render(request, f"{PAGE}#item_relations", context, status=status)
    return _page_with_editor(request, access, layer, {**context, "edit_form": ItemEditForm(item=item)}, status=status)


@require_POST
@workspace_view(Role.OPERATOR)
def relation_add(request: HttpRequest, access: WorkspaceAccess, layer_id: int, item_id: int) -> HttpResponse:
    """Relate the item to another of this workspace (either direction), checked by the service's validator."""
    assert access.current is not None
    layer = _layer(access, layer_id)
    item = _item(access, layer, item_id)
    form = RelationshipForm(request.POST, item=item, workspace=access.current)
    if form.is_valid():
        source_id, target_id = form.ends()
        try:
            relationship_create(
                workspace=access.current, source_id=source_id, target_id=target_id, kind=form.cleaned_data["kind"]
            )
        except DomainError as exc:  # the same edge made concurrently since the check
            form.add_error("other", exc.message)
        else:
            return _relations(request, access, layer, item.pk)
    return _relations(request, access, layer, item.pk, form)


@require_POST
@workspace_view(Role.OPERATOR)
def relation_remove(
    request: HttpRequest, access: WorkspaceAccess, layer_id: int, item_id: int, relationship_id: int
) -> HttpResponse:
    """Remove one of the item's relationships (404 unless it touches this item of this workspace)."""
    layer = _layer(access, layer_id)
    item = _item(access, layer, item_id)
    assert access.current is not None
    try:
        found = relationship_get(workspace=access.current, relationship_id=relationship_id)
    except NotFound as exc:
        raise Http404("No such relationship of this item.") from exc
    if item.pk not in (found.source_id, found.target_id):
        raise Http404("No such relationship of this item.")
    relationship_delete(relationship=found)
    return _relations(request, access, layer, item.pk)


@require_POST
@workspace_view(Role.OPERATOR)
def edit(request: HttpRequest, access: WorkspaceAccess, layer_id: int) -> HttpResponse:
    """Rename the layer or change its external id (a taken one: the service's 409 message, beside the field)."""
    layer = _layer(access, layer_id)
    form = LayerEditForm(request.POST)
    if form.is_valid():
        changes = {"name": form.cleaned_data["name"], "external_id": form.cleaned_data["external_id"] or None}
        try:
            layer_update(layer=layer, changes=changes)
        except DomainError as exc:
            form.add_error("external_id" if exc.code == DUPLICATE_EXTERNAL_ID.code else None, exc.message)
        else:
            messages.success(request, f"Layer {layer.name} saved.")
            return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]))
        layer.refresh_from_db()  # the page shows what is stored, the form what was typed
    return render(request, PAGE, _context(request, access, layer, layer_form=form), status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def proposal_decide_view(
    request: HttpRequest, access: WorkspaceAccess, layer_id: int, proposal_id: int
) -> HttpResponse:
    """Accept or reject a supersession proposal of the layer (`decision` = accept | reject); answers
    the proposals list (HTMX) or the page, with what was done."""
    layer = _layer(access, layer_id)
    assert access.current is not None
    if request.POST.get("decision") not in DECISIONS:
        return HttpResponse("decision must be accept or reject", status=400)
    done = decide(request, access, proposal_id=proposal_id, layer_id=layer.pk)
    if not is_htmx(request):
        messages.success(request, done)
        return HttpResponseRedirect(reverse("web:layer", args=[layer.pk]) + "#layer-proposals")
    context = {"layer": layer, "proposals": layer_proposals(workspace=access.current, layer=layer), "done": done}
    return render_page_or_partial(request, PAGE, "proposals", context)
