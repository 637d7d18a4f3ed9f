"""Reads for agent profiles, always scoped to one workspace."""

from __future__ import annotations

from dataclasses import fields

from django.db.models import QuerySet

from apps.core.errors import NotFound
from apps.profiles.errors import PROFILE_NOT_FOUND
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput
from apps.workspaces.models import Workspace


def profile_get(*, workspace: Workspace, name: str) -> AgentProfile:
    """The workspace's profile of that name, or NotFound (also for another workspace's profile)."""
    profile = AgentProfile.objects.filter(workspace=workspace, name=name).first()
    if profile is None:
        raise NotFound(f"profile {name!r} not found", code=PROFILE_NOT_FOUND)
    return profile


def profile_find(*, workspace: Workspace, name: str) -> AgentProfile | None:
    """The workspace's profile of that name, or None (a request naming an unknown one runs on the defaults)."""
    return AgentProfile.objects.filter(workspace=workspace, name=name).first()


def profiles_list(*, workspace: Workspace) -> QuerySet[AgentProfile]:
    """The workspace's profiles by name."""
    return AgentProfile.objects.filter(workspace=workspace).order_by("name")


def profile_settings(*, profile: AgentProfile) -> ProfileInput:
    """A profile's stored configuration as the services take it."""
    return ProfileInput(**{f.name: getattr(profile, f.name) for f in fields(ProfileInput)})
