"""WebSocket `/ws/v1/context/`: `{"type": "query", ...fields}` in; `chunk` events, then `complete`, out.

The fields are those of the JSON body of `POST /api/v1/context/` (at the top level, or under
`options` as in seed 004), validated by the same serializer. Authenticated by the Bearer header or
a first `{"type": "auth", "api_key": ...}` message (never the URL; see workspaces/ws_auth.py); the
key is checked on every message and needs the `read` scope. Bad input answers
`{"type": "error", "error": {...}}` and the connection stays open for the next query; only a
missing, bad or revoked key closes it (4401).
An optional `id` in a query is echoed on each of its events.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from rest_framework.exceptions import ValidationError

from apps.assembly.streaming import StreamEvent, context_events, context_params
from apps.core.errors import DomainError, InvalidInput
from apps.core.exceptions import api_exception_handler, error_body
from apps.workspaces.authentication import ApiClient
from apps.workspaces.ws_auth import ApiKeyConsumer


class ContextConsumer(ApiKeyConsumer):
    async def handle(self, client: ApiClient, content: Any) -> None:
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
