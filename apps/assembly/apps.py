from __future__ import annotations

from django.apps import AppConfig


class AssemblyConfig(AppConfig):
    name = "apps.assembly"
    default_auto_field = "django.db.models.BigAutoField"
