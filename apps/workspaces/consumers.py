"""WebSocket `/ws/v1/status/`: the workspace status on request, for dashboards and bulk loaders.

Authenticated like the REST API (Bearer header or `?api_key=`); the key is checked on connect
and again on every message, so a key revoked mid-connection stops answering.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async

from apps.core.ws_json import StrictJsonConsumer
from apps.workspaces.models import ApiKey
from apps.workspaces.selectors import workspace_status

UNAUTHORIZED = 4401


class StatusConsumer(StrictJsonConsumer):
    async def connect(self) -> None:
        if self.scope.get("api_client") is None:
            await self.close(code=UNAUTHORIZED)
            return
        await self.accept()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        client = self.scope["api_client"]
        if not await database_sync_to_async(_still_active)(client.api_key.pk):
            await self.send_json({"type": "error", "error": {"code": "invalid_api_key", "message": "Key revoked."}})
            await self.close(code=UNAUTHORIZED)
            return
        if not isinstance(content, dict) or content.get("type") != "status":
            await self.send_json(
                {"type": "error", "error": {"code": "invalid_message", "message": 'send {"type": "status"}'}}
            )
            return
        status = await database_sync_to_async(workspace_status)(workspace=client.workspace)
        await self.send_json({"type": "status", "data": status})


def _still_active(key_id: int) -> bool:
    return ApiKey.objects.filter(pk=key_id, revoked_at__isnull=True).exists()
