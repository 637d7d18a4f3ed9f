"""The audit trail of the current workspace: who changed what and when, old and new values (secrets
masked when kept); workspace admins only (a superuser is admin everywhere). Filters re-render the list
in place over HTMX; the same GET renders the whole page without JavaScript."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse

from apps.core.htmx import render_page_or_partial
from apps.web.access import workspace_view
from apps.web.forms.audit import AuditFilterForm
from apps.web.selectors.audit import audit_page
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role
from apps.workspaces.selectors import AuditFilters, audit_actors

PAGE = "web/audit/page.html"


@workspace_view(Role.ADMIN)
def audit(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    assert access.current is not None
    form = AuditFilterForm(request.GET or None)
    valid = form.is_bound and form.is_valid()
    filters = form.filters() if valid else AuditFilters()
    found = audit_page(workspace=access.current, filters=filters, number=request.GET.get("page", "1"))
    kept = {name: value for name, value in request.GET.items() if name != "page" and value}
    context = {
        "form": form,
        "rows": found.rows,
        "page": found.page,
        "filters_set": form.set_count() if valid else 0,
        "query": urlencode(kept),
        "actors": audit_actors(workspace=access.current),
        "crumbs": [("Audit trail", None)],
    }
    return render_page_or_partial(request, PAGE, "entries", context)
