"""WebSocket `/ws/v1/status/`: the workspace status on request, for dashboards and bulk loaders.

Authenticated like the REST API (the Bearer header, or a first `{"type": "auth", "api_key": ...}`
message; see ws_auth.py); the key is checked again on every message, so a key revoked
mid-connection stops answering.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from apps.workspaces.authentication import ApiClient
from apps.workspaces.selectors import workspace_status
from apps.workspaces.ws_auth import ApiKeyConsumer


class StatusConsumer(ApiKeyConsumer):
    async def handle(self, client: ApiClient, content: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "status":
            await self.send_json(
                {"type": "error", "error": {"code": "invalid_message", "message": 'send {"type": "status"}'}}
            )
            return
        status = await database_sync_to_async(workspace_status)(workspace=client.workspace)
        await self.send_json({"type": "status", "data": status})
