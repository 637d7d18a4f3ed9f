"""The templates area: the workspace's chunk templates beside the built-in ones; operators create, edit
and delete them. Every rule is `assembly.services.templates.template_errors`, the API's validator.

The creation page is `/templates/+new/`: `+` is not allowed in a template name, so it never hides one.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.assembly.models import OutputTemplate
from apps.assembly.selectors import template_get, templates_list
from apps.assembly.services.templates import template_create, template_delete, template_update
from apps.core.errors import DomainError, NotFound
from apps.engine import BUILTIN_TEMPLATES
from apps.engine.format import TEMPLATE_MAX_CONTENT, TEMPLATE_MAX_FIELDS, TEMPLATE_VARIABLES
from apps.web.access import workspace_view
from apps.web.forms.chunk_template import TemplateForm
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

DETAIL = "web/templates/detail.html"


def _rules() -> dict[str, Any]:
    return {
        "variables": sorted(TEMPLATE_VARIABLES),
        "max_fields": TEMPLATE_MAX_FIELDS,
        "max_content": TEMPLATE_MAX_CONTENT,
    }


@workspace_view()
def templates(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    context = {
        "templates": templates_list(workspace=access.current),
        "builtins": sorted(BUILTIN_TEMPLATES.values(), key=lambda t: t.name),
        "crumbs": [("Templates", None)],
        **_rules(),
    }
    return render(request, "web/templates/list.html", context)


def _template(access: WorkspaceAccess, name: str) -> OutputTemplate:
    assert access.current is not None
    try:
        return template_get(workspace=access.current, name=name)
    except NotFound as exc:
        raise Http404("No such template in this workspace.") from exc


def _page(request: HttpRequest, form: TemplateForm, template: OutputTemplate | None, status: int) -> HttpResponse:
    title = template.name if template else "New template"
    crumbs = [("Templates", reverse("web:templates")), (title, None)]
    context = {"form": form, "template": template, "title": title, "crumbs": crumbs, **_rules()}
    return render(request, DETAIL, context, status=status)


@require_http_methods(["GET", "POST"])
@workspace_view(Role.OPERATOR)
def template_new(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    if request.method != "POST":
        return _page(request, TemplateForm(), None, 200)
    form = TemplateForm(request.POST)
    if form.is_valid():
        try:
            made = template_create(
                workspace=access.current,
                name=form.cleaned_data["name"],
                body=form.cleaned_data["body"],
                by_type=form.by_type(),
            )
        except DomainError as exc:  # a template of that name made meanwhile: duplicate_template
            form.add_error("name", exc.message)
        else:
            messages.success(request, f"Template {made.name} created.")
            return HttpResponseRedirect(reverse("web:template", args=[made.name]))
    return _page(request, form, None, 422)


@require_http_methods(["GET", "POST"])
@workspace_view()
def template(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    current = _template(access, name)
    initial = {"name": current.name, "body": current.body}
    by_type = current.by_type if isinstance(current.by_type, dict) else {}
    if request.method != "POST":
        return _page(request, TemplateForm(initial=initial, by_type=by_type, editing=True), current, 200)
    if not access.can_edit:
        raise PermissionDenied("Only operators may change templates.")
    form = TemplateForm(request.POST, initial=initial, by_type=by_type, editing=True)
    if form.is_valid():
        template_update(template=current, body=form.cleaned_data["body"], by_type=form.by_type())
        messages.success(request, f"Template {current.name} saved.")
        return HttpResponseRedirect(reverse("web:template", args=[current.name]))
    return _page(request, form, current, 422)


@require_POST
@workspace_view(Role.OPERATOR)
def template_remove(request: HttpRequest, access: WorkspaceAccess, name: str) -> HttpResponse:
    current = _template(access, name)
    template_delete(template=current)
    messages.success(request, f"Template {current.name} deleted.")
    return HttpResponseRedirect(reverse("web:templates"))
