"""Which workspace a signed-in user is looking at, and what they may do there.

Order: the session's choice, then the workspace the user last switched to (kept across sessions),
then one they are a member of (an admin membership first), then the first by name. Switching is a
POST (`workspace_switch`); a GET never changes the choice. A superuser may open every workspace
and acts as its admin; everyone else only those they are a member of, with their membership's role.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.http import HttpRequest

from apps.web.models import WorkspacePreference
from apps.workspaces.models import ROLE_ORDER, Role, Workspace, role_allows
from apps.workspaces.selectors import workspaces_with_roles

SESSION_KEY = "workspace_slug"


@dataclass(frozen=True)
class WorkspaceAccess:
    """The current workspace (None when the user may open none), the user's role in it, and the rest."""

    current: Workspace | None
    role: str | None
    available: list[Workspace] = field(default_factory=list)

    def allows(self, needed: str) -> bool:
        return self.current is not None and role_allows(role=self.role, needed=needed)

    @property
    def can_edit(self) -> bool:
        """Operators and admins edit layer configs, items, profiles, templates and error patterns."""
        return self.allows(Role.OPERATOR)

    @property
    def can_develop(self) -> bool:
        """Developers and admins also open the developer console and traces of this workspace."""
        return self.allows(Role.DEVELOPER)

    @property
    def can_admin(self) -> bool:
        """Workspace admins also manage API keys, members and invitations."""
        return self.allows(Role.ADMIN)


def may_create_workspace(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Staff members and superusers create workspaces (and become their admins); other users are invited."""
    return bool(user.is_authenticated and (getattr(user, "is_staff", False) or getattr(user, "is_superuser", False)))


def workspace_access(request: HttpRequest) -> WorkspaceAccess:
    """The request's workspace and role (one query; two on a session's first page), kept in the session."""
    user = request.user
    available = workspaces_with_roles(user=user)
    if not available:
        return WorkspaceAccess(current=None, role=None, available=[])
    by_slug = {workspace.slug: workspace for workspace in available}
    current = by_slug.get(request.session.get(SESSION_KEY) or "") or _landing(
        user_id=int(user.pk or 0), available=available
    )
    if request.session.get(SESSION_KEY) != current.slug:
        request.session[SESSION_KEY] = current.slug
    role = Role.ADMIN if getattr(user, "is_superuser", False) else current.member_role  # type: ignore[attr-defined]
    return WorkspaceAccess(current=current, role=role, available=available)


def _landing(*, user_id: int, available: list[Workspace]) -> Workspace:
    """A new session's workspace: the last one switched to, else the user's own, else the first."""
    by_pk = {workspace.pk: workspace for workspace in available}
    preferred = WorkspacePreference.objects.filter(user_id=user_id).values_list("workspace_id", flat=True).first()
    if preferred in by_pk:
        return by_pk[preferred]
    own = [workspace for workspace in available if workspace.member_role]  # type: ignore[attr-defined]
    own.sort(key=lambda workspace: (-ROLE_ORDER.index(workspace.member_role), workspace.pk))  # type: ignore[attr-defined]
    return own[0] if own else available[0]


def workspace_switch(*, request: HttpRequest, slug: str) -> Workspace | None:
    """Make `slug` the current workspace (and the next session's), if the user may open it."""
    access = workspace_access(request)
    chosen = next((workspace for workspace in access.available if workspace.slug == slug), None)
    if chosen is None:
        return None
    request.session[SESSION_KEY] = chosen.slug
    WorkspacePreference.objects.update_or_create(user_id=request.user.pk, defaults={"workspace": chosen})
    return chosen
