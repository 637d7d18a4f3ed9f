from __future__ import annotations

from django.apps import AppConfig


class ProfilesConfig(AppConfig):
    name = "apps.profiles"
    default_auto_field = "django.db.models.BigAutoField"
