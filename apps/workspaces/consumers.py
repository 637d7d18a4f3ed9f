"""WebSocket `/ws/v1/status/`: the workspace status on request, for dashboards and bulk loaders.

Authenticated like the REST API (the Bearer header, or a first `{"type": "auth", "api_key": ...}`
message; see ws_auth.py); the key is checked again on every message, so a key revoked
mid-connection stops answering.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from apps.core.events import status_group
from apps.core.field_errors import INVALID_MESSAGE
from apps.workspaces.authentication import ApiClient
from apps.workspaces.selectors import workspace_status
from apps.workspaces.ws_auth import ApiKeyConsumer, _still_active


class StatusConsumer(ApiKeyConsumer):
    """Answers `{"type": "status"}`; from then on also pushes the status whenever the workspace's
    items are written or embedded, by whichever server instance or worker did it."""

    subscribed: str | None = None

    async def handle(self, client: ApiClient, content: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "status":
            await self.send_json(
                {"type": "error", "error": {"code": INVALID_MESSAGE.code, "message": 'send {"type": "status"}'}}
            )
            return
        if self.subscribed is None:
            self.subscribed = status_group(client.workspace.pk)
            await self.channel_layer.group_add(self.subscribed, self.channel_name)
        await self._send_status(client)

    async def status_changed(self, event: dict[str, Any]) -> None:
        if self.client is not None and await database_sync_to_async(_still_active)(self.client.api_key.pk):
            await self._send_status(self.client)

    async def _send_status(self, client: ApiClient) -> None:
        status = await database_sync_to_async(workspace_status)(workspace=client.workspace)
        await self.send_json({"type": "status", "data": status})

    async def disconnect(self, code: int) -> None:
        if self.subscribed is not None:
            await self.channel_layer.group_discard(self.subscribed, self.channel_name)
        await super().disconnect(code)
