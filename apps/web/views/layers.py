"""The layers area: the workspace's tree."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.web.access import workspace_view
from apps.web.layer_tree import layer_rows
from apps.web.workspace_choice import WorkspaceAccess


@workspace_view()
def tree(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The current workspace's layers as an indented tree with item counts (one query)."""
    assert access.current is not None
    rows = layer_rows(workspace=access.current)
    return render(request, "web/layers/tree.html", {"rows": rows, "crumbs": [("Layers", None)]})
