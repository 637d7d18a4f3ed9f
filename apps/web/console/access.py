"""Who may open the console: staff members, in the workspace they are looking at (superusers: any)."""

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


def staff_view(view: ConsoleView) -> ConsoleView:
    """Login, a current workspace the user belongs to, and `is_staff`; the view gets the access.

    Anonymous → the login page (HTMX: HX-Redirect); a signed-in non-staff member → 403.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, access: WorkspaceAccess, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not request.user.is_staff:
            raise PermissionDenied("The console is for staff.")
        return view(request, access, *args, **kwargs)

    return workspace_view()(wrapped)
