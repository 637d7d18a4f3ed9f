"""The base of the JSON WebSocket consumers: messages pass the same strict JSON check as HTTP bodies."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from apps.core import errors
from apps.core.errors import InvalidInput
from apps.core.exceptions import error_body
from apps.core.strict_json import loads_strict


class StrictJsonConsumer(AsyncJsonWebsocketConsumer):
    """A message that is not strict JSON (apps/core/strict_json.py) or not text answers
    `{"type": "error", "error": {...}}` with the REST API's code; the connection stays open."""

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        if text_data is None:
            await self.send_json(
                {"type": "error", **error_body(errors.MALFORMED_JSON.code, "send JSON in a text frame")}
            )
            return
        try:
            content = loads_strict(text_data, where="message")
        except InvalidInput as exc:
            await self.send_json({"type": "error", **error_body(exc.code, exc.message, exc.details)})
            return
        await self.receive_json(content, **kwargs)
