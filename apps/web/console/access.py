"""Who may open the console: developers and admins of the workspace they are looking at (superusers: any).

A per-workspace role, not the global `is_staff` flag: a workspace admin grants it on Keys and
members, and it opens that workspace's console only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess

ConsoleView = Callable[..., HttpResponseBase]


def developer_view(view: ConsoleView) -> ConsoleView:
    """Login, a current workspace the user belongs to, and the developer role or above there; the view
    gets the access. Anonymous → the login page (HTMX: HX-Redirect); a viewer or operator → 403."""

    @wraps(view)
    def wrapped(request: HttpRequest, access: WorkspaceAccess, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not access.can_develop:
            name = access.current.name if access.current else "this workspace"
            raise PermissionDenied(
                f"The console is for developers and admins of {name}. An admin of {name} can give you the "
                "developer role on Keys and members."
            )
        return view(request, access, *args, **kwargs)

    return workspace_view()(wrapped)
