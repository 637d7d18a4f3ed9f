"""WebSocket authentication: the API key from `Authorization: Bearer` or `?api_key=` decides the workspace."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware

from apps.workspaces.authentication import ApiClient, authenticate_secret


def _secret_from_scope(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            parts = value.decode(errors="replace").split()
            if len(parts) == 2 and parts[0].lower() == "bearer":
                return parts[1]
    query = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
    return query.get("api_key", [None])[0]


class ApiKeyWebsocketMiddleware(BaseMiddleware):
    """Puts `scope["client"]` as an ApiClient (or None); consumers refuse connections without one."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        secret = _secret_from_scope(scope)
        client: ApiClient | None = None
        if secret:
            client = await database_sync_to_async(authenticate_secret)(secret)
        scope = dict(scope, api_client=client)
        return await super().__call__(scope, receive, send)
