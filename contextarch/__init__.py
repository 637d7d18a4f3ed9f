"""Context Architect project package: settings, URLs, ASGI, WebSocket routes, Celery wiring and the demo seed."""

from __future__ import annotations

from contextarch.celery import app as celery_app

__all__ = ["celery_app"]
