"""One check for every page and action: signed in, a workspace to look at, and a role high enough.

    @workspace_view(Role.OPERATOR)
    def layer_config_save(request, access, layer_id): ...

The view gets the `WorkspaceAccess` as its second argument; anything it reads or writes is scoped
to `access.current`. Anonymous → the login page (an HTMX request gets `HX-Redirect`, see
`apps.core.htmx.HtmxLoginRedirectMiddleware`); no workspace → a page saying how to get one (200: nothing failed);
a role too low → 403 (the styled `403.html`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, Concatenate, ParamSpec

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render

from apps.core.replicas import replica_reads
from apps.web.workspace_choice import WorkspaceAccess, may_create_workspace, workspace_access
from apps.workspaces.audit import acting_as, user_actor
from apps.workspaces.models import Role

P = ParamSpec("P")
AccessView = Callable[Concatenate[HttpRequest, WorkspaceAccess, P], HttpResponseBase]
View = Callable[Concatenate[HttpRequest, P], HttpResponseBase]

ROLE_NAMES = {
    Role.VIEWER: "viewers",
    Role.OPERATOR: "operators",
    Role.DEVELOPER: "developers",
    Role.ADMIN: "workspace admins",
}


def workspace_view(needed: str = Role.VIEWER, *, replica: bool = False) -> Callable[[AccessView[P]], View[P]]:
    """Wrap a page or action: login, current workspace, `needed` role; passes the access along.

    `replica`: a GET reads from a streaming replica that holds the workspace's current content
    version (apps/core/replicas.py), else from the primary. Only for pages whose reads the content
    version covers (items, layers, summaries, profiles, patterns) or that tolerate a replica's lag
    (the dashboard's figures): not for keys, members or invitations, which it does not cover.
    """

    def decorate(view: AccessView[P]) -> View[P]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: P.args, **kwargs: P.kwargs) -> HttpResponseBase:
            access = workspace_access(request)
            request.web_access = access  # type: ignore[attr-defined]  # read by the layout's context processor
            if access.current is None:
                return render(request, "web/no_workspace.html")
            if not access.allows(needed):
                raise PermissionDenied(f"Only {ROLE_NAMES[Role(needed)]} of {access.current.name} may do this.")
            with acting_as(user_actor(user_id=request.user.pk, username=request.user.get_username())):
                if replica and request.method in ("GET", "HEAD"):
                    with replica_reads(workspace_id=access.current.pk):
                        return view(request, access, *args, **kwargs)
                return view(request, access, *args, **kwargs)

        return login_required(wrapped)

    return decorate


def layout_context(request: HttpRequest) -> dict[str, Any]:
    """Context processor: the workspace switcher, the user's role and the sidebar's entries."""
    from apps.web.navigation import nav_entries

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    access = getattr(request, "web_access", None)
    if access is None:
        access = workspace_access(request)
        request.web_access = access  # type: ignore[attr-defined]
    return {
        "access": access,
        "workspace": access.current,
        "workspaces": access.available,
        "nav": nav_entries(request, access),
        "may_create_workspace": may_create_workspace(user),
    }
