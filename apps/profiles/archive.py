"""The profiles app's part of a workspace archive (apps/core/archive): agent profiles."""

from __future__ import annotations

import dataclasses

from apps.core.archive.parts import model_part, register
from apps.profiles.models import AgentProfile
from apps.profiles.services import ProfileInput


def register_parts() -> None:
    register(
        model_part(
            name="profiles",
            order=100,
            model=AgentProfile,
            # A profile is its name and its settings: ProfileInput lists every one (a new setting is archived too).
            fields=("name", *(field.name for field in dataclasses.fields(ProfileInput))),
        )
    )
