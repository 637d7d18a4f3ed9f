"""The Django admin is for superusers only; operators and workspace admins work in the pages.

A staff member of one workspace must not read or change another's rows, and the admin cannot be
scoped row by row without re-checking every queryset, foreign-key choice and save of every model.
So the admin is the superuser's tool (installation-wide repairs); everything a workspace member
does (layer configs, items, profiles, templates, error patterns) is in apps/web, scoped by role.
"""

from __future__ import annotations

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig
from django.http import HttpRequest


class SuperuserAdminSite(AdminSite):
    site_header = "Context Architect administration (superusers)"

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_superuser)


class SuperuserAdminConfig(AdminConfig):
    """Replaces django.contrib.admin in INSTALLED_APPS so `admin.site` is the superuser-only site."""

    default_site = "apps.core.admin_site.SuperuserAdminSite"
