"""WebSocket routes of the service (Channels); consumers live in their apps, the routes that join them here."""

from __future__ import annotations

from django.urls import path

from apps.assembly.consumers import ContextConsumer
from apps.workspaces.consumers import StatusConsumer

websocket_urlpatterns = [
    path("ws/v1/status/", StatusConsumer.as_asgi()),
    path("ws/v1/context/", ContextConsumer.as_asgi()),
]
