"""`/console/`: the workspace's assemblies, filtered, searched and paginated. Developers and admins of the workspace."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict

from apps.assembly.models import AssemblyRecord
from apps.assembly.recorded import request_decisions
from apps.assembly.selectors import RecordFilters, agent_types_recorded, assembly_records_list, original_zones
from apps.core.htmx import render_page_or_partial
from apps.web.console.access import developer_view
from apps.web.console.forms import RecordFilterForm
from apps.web.layer_tree import layer_rows
from apps.web.trace_notes import tags_by_trace, tags_in_use, traces_tagged
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Workspace
from apps.workspaces.selectors import api_keys_list

PER_PAGE = 50
TEMPLATE = "console/records.html"


def _zone(record: AssemblyRecord, originals: dict[str, str]) -> str:
    request = record.request if isinstance(record.request, dict) else {}
    return str(request_decisions(request).get("zone") or originals.get(str(request.get("cached_from")), ""))


def filter_form(*, workspace: Workspace, data: QueryDict | None) -> RecordFilterForm:
    """The filters with the workspace's layers, keys and agent types to choose from (the list's, and
    the experiments' "save these queries as a question set")."""
    keys = api_keys_list(workspace=workspace).order_by("name", "id").values_list("id", "name", "prefix")
    return RecordFilterForm(
        data or None,
        layers=[(row.id, row.label) for row in layer_rows(workspace=workspace)],
        api_keys=[(key_id, f"{name} ({prefix}…)") for key_id, name, prefix in keys],
        agent_types=agent_types_recorded(workspace=workspace),
        tags=tags_in_use(workspace=workspace),
        tagged=lambda tag: traces_tagged(workspace=workspace, tag=tag),
    )


@developer_view
def records(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The list; an HTMX request (filter change, page link) gets only the #records fragment."""
    workspace = access.current
    assert workspace is not None
    form = filter_form(workspace=workspace, data=request.GET)
    # Invalid filters are shown as errors beside an unfiltered list, never a 500.
    filters = form.filters() if form.is_bound and form.is_valid() else RecordFilters()
    rows = assembly_records_list(workspace=workspace, filters=filters)
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    records_shown = list(page.object_list)
    zones = original_zones(workspace=workspace, records=records_shown)
    # Each record with its zone; a cache hit shows the zone of the assembly it came from.
    tags = tags_by_trace(workspace=workspace, trace_ids=[record.trace_id for record in records_shown])
    rows_shown = [(record, _zone(record, zones), tags.get(str(record.trace_id), [])) for record in records_shown]
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "rows": rows_shown,
        "filtered": filters != RecordFilters(),
        "query_string": query.urlencode(),
        "filter_pairs": [(name, value) for name, values in query.lists() for value in values],
        "filters_set": sum(1 for name, value in request.GET.items() if name not in ("q", "page") and value),
        "crumbs": [("Console", None)],
    }
    return render_page_or_partial(request, TEMPLATE, "records", context)
