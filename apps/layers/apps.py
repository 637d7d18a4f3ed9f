from __future__ import annotations

from typing import Any

from django.apps import AppConfig


class LayersConfig(AppConfig):
    name = "apps.layers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        connection_created.connect(_on_connection_created, dispatch_uid="layers_vector_session")


def _on_connection_created(sender: Any, connection: Any, **kwargs: Any) -> None:
    from apps.layers import vectors

    vectors.configure_session(connection)
