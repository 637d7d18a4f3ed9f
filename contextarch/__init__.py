"""Context Architect project package: settings, URLs, ASGI and Celery wiring."""

from __future__ import annotations

from contextarch.celery import app as celery_app

__all__ = ["celery_app"]
