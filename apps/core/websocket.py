"""WebSocket routes of the service (Channels); consumers live in their apps."""

from __future__ import annotations

websocket_urlpatterns: list = []
