"""The profiles app's part of a workspace archive (apps/core/archive): agent profiles and the items they exclude."""

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
            # A profile is its name, its settings (ProfileInput lists every one: a new setting is archived
            # too) and the items it excludes, whose ids the restore maps to the copies' (items come first).
            fields=("name", *(field.name for field in dataclasses.fields(ProfileInput)), "excluded_items"),
            id_lists={"excluded_items": "item"},
        )
    )
