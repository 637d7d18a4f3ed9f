"""WebSocket authentication: the API key comes from `Authorization: Bearer` or the first message.

Never from the URL: a key in `?api_key=` lands in proxy and access logs (REST and SSE refuse it
too), so such a connection is closed at once (4401). Browsers cannot set headers on a WebSocket,
so a connection without the header is accepted and its first message must be
`{"type": "auth", "api_key": "<key>"}`; anything else, a bad key or no message within
`WEBSOCKET_AUTH_SECONDS` closes it (4401). The key is checked again on every message (a key revoked
mid-connection stops answering) and must carry the consumer's scope (`read`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from django.conf import settings

from apps.core import errors
from apps.core.errors import TooManyRequests
from apps.core.exceptions import error_body
from apps.core.ratelimit import rate_hit, scope_address
from apps.core.ws_json import StrictJsonConsumer
from apps.workspaces.authentication import ApiClient, authenticate_secret
from apps.workspaces.models import ApiKey, Scope

UNAUTHORIZED = 4401
FORBIDDEN = 4403
RATE_LIMITED = 4429


def _secret_from_headers(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            parts = value.decode(errors="replace").split()
            if len(parts) == 2 and parts[0].lower() == "bearer":
                return parts[1]
    return None


class ApiKeyWebsocketMiddleware(BaseMiddleware):
    """Puts `scope["api_client"]` (an ApiClient from the header, or None) and flags a key in the URL."""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        secret = _secret_from_headers(scope)
        client: ApiClient | None = None
        refused: str | None = None
        if secret:
            try:
                client = await database_sync_to_async(authenticate_secret)(secret, address=scope_address(scope))
            except TooManyRequests:
                refused = "rate_limited"
        query = parse_qs(scope.get("query_string", b"").decode(errors="replace"))
        if "api_key" in query:
            refused = "api_key_in_url"
        scope = dict(scope, api_client=client, auth_refused=refused)
        return await super().__call__(scope, receive, send)


class ApiKeyConsumer(StrictJsonConsumer):
    """A JSON consumer whose `handle(client, content)` runs only for an authenticated key with `read`."""

    required_scope: str = Scope.READ.value
    client: ApiClient | None = None
    _deadline: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        refused = self.scope.get("auth_refused")
        if refused:
            await self.close(code=RATE_LIMITED if refused == "rate_limited" else UNAUTHORIZED)
            return
        self.client = self.scope.get("api_client")
        await self.accept()
        if self.client is None:
            self._deadline = asyncio.create_task(self._close_unless_authenticated())
        elif not self.client.api_key.has_scope(self.required_scope):
            await self._refuse_scope()

    async def disconnect(self, code: int) -> None:
        if self._deadline is not None:
            self._deadline.cancel()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if self.client is None:
            await self._authenticate(content)
            return
        if not await database_sync_to_async(_still_active)(self.client.api_key.pk):
            await self.send_json({"type": "error", **error_body(errors.INVALID_API_KEY.code, "Key revoked.")})
            await self.close(code=UNAUTHORIZED)
            return
        # Each message counts against the key like a REST request; over the rate it is refused, the socket stays.
        wait = rate_hit(bucket="api-key", ident=str(self.client.api_key.pk), rate=settings.RATE_LIMIT_API_KEY)
        if wait is not None:
            message = "this API key is over its request rate"
            await self.send_json(
                {"type": "error", **error_body(errors.RATE_LIMITED.code, message, {"retry_after": wait})}
            )
            return
        await self.handle(self.client, content)

    async def handle(self, client: ApiClient, content: Any) -> None:
        raise NotImplementedError

    async def _authenticate(self, content: Any) -> None:
        secret = content.get("api_key") if isinstance(content, dict) and content.get("type") == "auth" else None
        if not isinstance(secret, str) or not secret:
            message = 'authenticate first: {"type": "auth", "api_key": "<key>"} (or the Authorization header)'
            await self._close_with(UNAUTHORIZED, "not_authenticated", message)
            return
        try:
            client = await database_sync_to_async(authenticate_secret)(secret, address=scope_address(self.scope))
        except TooManyRequests as exc:
            await self._close_with(RATE_LIMITED, exc.code, exc.message, {"retry_after": exc.retry_after})
            return
        if client is None:
            await self._close_with(UNAUTHORIZED, "invalid_api_key", "Invalid or revoked API key.")
            return
        self.client = client
        if self._deadline is not None:
            self._deadline.cancel()
        if not client.api_key.has_scope(self.required_scope):
            await self._refuse_scope()
            return
        await self.send_json({"type": "auth", "data": {"workspace": client.workspace.slug}})

    async def _refuse_scope(self) -> None:
        assert self.client is not None
        details = {"required": self.required_scope, "scopes": list(self.client.api_key.scopes)}
        message = f"this API key lacks the {self.required_scope!r} scope"
        await self._close_with(FORBIDDEN, "insufficient_scope", message, details)

    async def _close_with(
        self, close_code: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        await self.send_json({"type": "error", **error_body(code, message, details)})
        await self.close(code=close_code)

    async def _close_unless_authenticated(self) -> None:
        await asyncio.sleep(settings.WEBSOCKET_AUTH_SECONDS)
        if self.client is None:
            with contextlib.suppress(Exception):  # the socket may be gone already
                await self._close_with(UNAUTHORIZED, "not_authenticated", "no auth message in time")


def _still_active(key_id: int) -> bool:
    return ApiKey.objects.filter(pk=key_id, revoked_at__isnull=True).exists()
