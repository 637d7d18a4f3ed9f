from __future__ import annotations

from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "apps.workspaces"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.workspaces.archive import register_parts

        register_parts()
        from django.db.models.signals import post_delete, post_save

        from apps.workspaces import erasure, schema  # noqa: F401 - schema registers the OpenAPI auth extension
        from apps.workspaces.models import ApiKey

        erasure.register()
        post_save.connect(_key_changed, sender=ApiKey, dispatch_uid="api-key-cache-save")
        post_delete.connect(_key_changed, sender=ApiKey, dispatch_uid="api-key-cache-delete")


def _key_changed(sender: type, instance: object, **kwargs: object) -> None:
    """A saved (revoked, edited) or deleted key is dropped from every process's key cache."""
    from apps.workspaces.key_cache import key_changed

    key_hash = getattr(instance, "key_hash", "")
    if key_hash and not kwargs.get("created"):
        key_changed(key_hash)
