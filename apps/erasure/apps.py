from __future__ import annotations

from django.apps import AppConfig


class ErasureConfig(AppConfig):
    """Erasure with a receipt (issue 24 item 2): forget items, a user or a text everywhere, and keep
    a record of what was done that holds none of it. Each app erases its own rows (apps/core/erasure.py)."""

    name = "apps.erasure"
    default_auto_field = "django.db.models.BigAutoField"
