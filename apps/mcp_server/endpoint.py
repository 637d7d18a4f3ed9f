"""The streamable-HTTP endpoint at /mcp/: the API key gate, then the SDK's transport (stateless, JSON).

Stateless because `scripts/serve` runs several worker processes with nothing shared between
them: any worker answers any MCP request, and no session lives in one process's memory. The
SDK's session manager needs a running task group; ASGI lifespan is not available under every
server here (daphne has none, Channels' router refuses it), so the first request of a process
starts it on that process's event loop.

The SDK (mcp 2.3.0) serves every protocol revision on this one path: a request carrying
`MCP-Protocol-Version: 2026-07-28` is a self-contained envelope (`server/discover`, no
`initialize`, no session id); older clients (2024-11-05 to 2025-11-25) keep their handshake.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from channels.db import database_sync_to_async
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from apps.core import telemetry
from apps.core.errors import TooManyRequests
from apps.core.ratelimit import scope_address
from apps.mcp_server.results import error_body
from apps.mcp_server.server import mcp_server
from apps.workspaces.authentication import authenticate_secret

Scope = dict[str, Any]
PATH = "/mcp"


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == b"authorization":
            parts = value.decode("latin-1").split()
            if len(parts) == 2 and parts[0].lower() == "bearer":
                return parts[1]
            return ""
    return None


async def _answer(send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    start_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": start_headers + headers})
    await send({"type": "http.response.body", "body": payload})


class McpEndpoint:
    """ASGI app for `/mcp/`: 401 without a valid key (the API's codes), else the MCP transport."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None
        self._running: asyncio.Task[None] | None = None
        self._started = asyncio.Event()

    async def _run(self, manager: StreamableHTTPSessionManager) -> None:
        async with manager.run():
            self._started.set()
            await asyncio.Event().wait()  # for the life of the process

    async def _session_manager(self) -> StreamableHTTPSessionManager:
        if self._manager is None:
            server = mcp_server()
            # A Bearer key, not a cookie, authenticates: a DNS-rebound page cannot send it, so the
            # SDK's Host/Origin check adds nothing; Django's ALLOWED_HOSTS still applies to API calls.
            server.streamable_http_app(
                stateless_http=True,
                json_response=True,
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            self._manager = server.session_manager
            self._running = asyncio.get_running_loop().create_task(self._run(self._manager))
        await self._started.wait()
        return self._manager

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["path"].rstrip("/") != PATH:
            await _answer(send, 404, error_body("not_found", "Not found."), [])
            return
        secret = _bearer(scope)
        if not secret:
            code, message = ("not_authenticated", "Authentication credentials were not provided.")
            if secret == "":
                code, message = ("invalid_api_key", "Authorization header must be 'Bearer <api key>'.")
            await _answer(send, 401, error_body(code, message), [(b"www-authenticate", b"Bearer")])
            return
        try:
            client = await database_sync_to_async(authenticate_secret)(secret, address=scope_address(scope))
        except TooManyRequests as exc:
            body = error_body(exc.code, exc.message, exc.details)
            await _answer(send, 429, body, [(b"retry-after", str(exc.retry_after).encode())])
            return
        if client is None:
            body = error_body("invalid_api_key", "Invalid or revoked API key.")
            await _answer(send, 401, body, [(b"www-authenticate", b"Bearer")])
            return
        manager = await self._session_manager()
        # A `traceparent` header makes the SDK's `tools/call` span (and so every span under it) a child
        # of the caller's; one in the message's `_meta` takes precedence, as the SDK reads it.
        with telemetry.continued(telemetry.asgi_carrier(scope.get("headers", []))):
            await manager.handle_request(scope, receive, send)


def with_mcp(app: Any) -> Any:
    """`app` for every HTTP path but `/mcp` and `/mcp/...`, which the MCP endpoint answers."""
    endpoint = McpEndpoint()

    async def router(scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and (path == PATH or path.startswith(PATH + "/")):
            await endpoint(scope, receive, send)
        else:
            await app(scope, receive, send)

    return router
