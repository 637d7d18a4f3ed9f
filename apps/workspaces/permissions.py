"""API key scopes: GET needs `read`, changes need `write`, key management needs `admin`.

A view names another scope with `required_scope` (POST /context/ only reads, so it needs `read`;
the keys API needs `admin` for every method). The check runs after authentication, so a request
without a valid key is still a 401 and a key without the scope is a 403 `insufficient_scope`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from apps.core.errors import Forbidden
from apps.workspaces.authentication import client_of
from apps.workspaces.errors import INSUFFICIENT_SCOPE
from apps.workspaces.models import Scope

if TYPE_CHECKING:  # rest_framework.views imports this module through its settings
    from rest_framework.views import APIView


def required_scope_of(*, view: APIView | type[APIView] | None, method: str) -> str:
    """The scope a request needs: the view's (or view class's) `required_scope`, else read for safe
    methods, else write."""
    named: str | None = getattr(view, "required_scope", None)
    if named is not None:
        return str(Scope(named).value)
    return Scope.READ.value if method in SAFE_METHODS else Scope.WRITE.value


class HasScope(BasePermission):
    """Authenticated by an API key that carries the scope the view and method need."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        key = client_of(request).api_key  # 401 when unauthenticated, before any scope talk
        needed = required_scope_of(view=view, method=request.method or "GET")
        if not key.has_scope(needed):
            raise Forbidden(
                f"this API key lacks the {needed!r} scope",
                code=INSUFFICIENT_SCOPE,
                details={"required": needed, "scopes": list(key.scopes)},
            )
        return True
