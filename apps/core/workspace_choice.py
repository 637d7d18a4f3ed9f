"""Which workspace a signed-in user is looking at: `?workspace=<slug>`, then the session, then the first.

The choice is remembered in the session, so every page (and the preview's POST) agrees on it.
Only workspaces the user may see can be chosen; an unknown slug falls back silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from apps.workspaces.models import Workspace
from apps.workspaces.selectors import workspaces_for_user

SESSION_KEY = "workspace_slug"


@dataclass(frozen=True)
class WorkspaceChoice:
    """The current workspace (None when the user belongs to none) and all the user may switch to."""

    current: Workspace | None
    available: list[Workspace]


def workspace_choose(request: HttpRequest) -> WorkspaceChoice:
    """The request's workspace, remembering an explicit `?workspace=` choice in the session."""
    available = workspaces_for_user(user=request.user)
    by_slug = {workspace.slug: workspace for workspace in available}
    wanted = request.GET.get("workspace") or request.session.get(SESSION_KEY)
    current = by_slug.get(wanted) if wanted else None
    if current is None and available:
        current = available[0]
    if current is not None and request.session.get(SESSION_KEY) != current.slug:
        request.session[SESSION_KEY] = current.slug
    return WorkspaceChoice(current=current, available=available)
