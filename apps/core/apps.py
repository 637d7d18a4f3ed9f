from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "apps.core"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_login_failed

        from apps.core import lookups, periodic_runs
        from apps.core.error_catalogue import catalogue_load
        from apps.core.login_limits import login_failure_record
        from apps.core.telemetry import tracing_configure

        periodic_runs.connect_celery()
        user_login_failed.connect(login_failure_record, dispatch_uid="core.login_failure_record")
        assert lookups.AnyOf.lookup_name == "any"  # registered on import
        tracing_configure(install_global=True)  # off unless the OTEL_* environment asks for it
        catalogue_load()  # every app's error codes, for the schema and the exception handler
