from __future__ import annotations

from django.apps import AppConfig


class ConsumptionConfig(AppConfig):
    name = "apps.consumption"
    default_auto_field = "django.db.models.BigAutoField"
