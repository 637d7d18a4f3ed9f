"""`/console/`: the workspace's assemblies, filtered, searched and paginated. Staff only."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse

from apps.assembly.models import AssemblyRecord
from apps.core.htmx import render_page_or_partial
from apps.web.console.access import staff_view
from apps.web.console.forms import RecordFilterForm
from apps.web.console.selectors import RecordFilters, agent_types_recorded, assembly_records_list, original_zones
from apps.web.layer_tree import layer_rows
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import ApiKey

PER_PAGE = 50
TEMPLATE = "console/records.html"


def _zone(record: AssemblyRecord, originals: dict[str, str]) -> str:
    request = record.request if isinstance(record.request, dict) else {}
    return str(request.get("zone") or originals.get(str(request.get("cached_from")), ""))


@staff_view
def records(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The list; an HTMX request (filter change, page link) gets only the #records fragment."""
    workspace = access.current
    assert workspace is not None
    keys = ApiKey.objects.filter(workspace=workspace).order_by("name", "id").values_list("id", "name", "prefix")
    form = RecordFilterForm(
        request.GET or None,
        layers=[(row.id, row.label) for row in layer_rows(workspace=workspace)],
        api_keys=[(key_id, f"{name} ({prefix}…)") for key_id, name, prefix in keys],
        agent_types=agent_types_recorded(workspace=workspace),
    )
    # Invalid filters are shown as errors beside an unfiltered list, never a 500.
    filters = form.filters() if form.is_bound and form.is_valid() else RecordFilters()
    rows = assembly_records_list(workspace=workspace, filters=filters)
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    records_shown = list(page.object_list)
    zones = original_zones(workspace=workspace, records=records_shown)
    # Each record with its zone; a cache hit shows the zone of the assembly it came from.
    rows_shown = [(record, _zone(record, zones)) for record in records_shown]
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "rows": rows_shown,
        "filtered": filters != RecordFilters(),
        "query_string": query.urlencode(),
        "crumbs": [("Console", None)],
    }
    return render_page_or_partial(request, TEMPLATE, "records", context)
