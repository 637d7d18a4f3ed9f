from __future__ import annotations

from django.apps import AppConfig


class ProxyConfig(AppConfig):
    name = "apps.proxy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.assembly.trace_sections import trace_sections
        from apps.proxy import erasure
        from apps.proxy.archive import register_parts
        from apps.proxy.selectors import proxy_call_of_trace

        erasure.register()
        register_parts()
        trace_sections["proxy"] = proxy_call_of_trace
