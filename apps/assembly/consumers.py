"""WebSocket `/ws/v1/context/`: `{"type": "query", ...fields}` in; `chunk` events, then `complete`, out.

The fields are those of the JSON body of `POST /api/v1/context/` (at the top level, or under
`options` as in seed 004), validated by the same serializer. Authenticated like the REST API; the
key is checked on connect and on every message. Bad input answers `{"type": "error", "error": {...}}`
and the connection stays open for the next query; only a missing or revoked key closes it (4401).
An optional `id` in a query is echoed on each of its events.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from rest_framework.exceptions import ValidationError

from apps.assembly.streaming import StreamEvent, context_events, context_params
from apps.core.errors import DomainError, InvalidInput
from apps.core.exceptions import api_exception_handler, error_body
from apps.core.ws_json import StrictJsonConsumer
from apps.workspaces.authentication import ApiClient
from apps.workspaces.models import ApiKey

UNAUTHORIZED = 4401


class ContextConsumer(StrictJsonConsumer):
    async def connect(self) -> None:
        if self.scope.get("api_client") is None:
            await self.close(code=UNAUTHORIZED)
            return
        await self.accept()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        client: ApiClient = self.scope["api_client"]
        if not await database_sync_to_async(_still_active)(client.api_key.pk):
            await self.send_json({"type": "error", **error_body("invalid_api_key", "Key revoked.")})
            await self.close(code=UNAUTHORIZED)
            return
        if not isinstance(content, dict) or content.get("type") != "query":
            message = 'send {"type": "query", "layer": ..., "query": ...}'
            await self.send_json({"type": "error", **error_body("invalid_message", message)})
            return
        echo = {"id": content["id"]} if "id" in content else {}
        try:
            events = await database_sync_to_async(_events)(client, content)
        except (DomainError, ValidationError) as exc:
            response = api_exception_handler(exc, {})  # the REST API's codes and messages
            body = response.data if response is not None else error_body("invalid_input", str(exc))
            await self.send_json({"type": "error", **echo, **body})
            return
        for event in events:
            await self.send_json({"type": event["type"], **echo, "data": event["data"]})


def _events(client: ApiClient, content: dict[str, Any]) -> list[StreamEvent]:
    options = content.get("options") or {}
    if not isinstance(options, dict):
        raise InvalidInput("`options` must be an object", code="invalid_options")
    fields = {key: value for key, value in content.items() if key not in ("type", "id", "options")}
    params = context_params(request={**options, **fields})
    return context_events(workspace=client.workspace, params=params, api_key=client.api_key)


def _still_active(key_id: int) -> bool:
    return ApiKey.objects.filter(pk=key_id, revoked_at__isnull=True).exists()
