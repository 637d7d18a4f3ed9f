"""Stored profiles lose the `pinned` ranking weight: it was accepted and ignored by the engine
(pinned items go first whatever the weights) and is refused from now on."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def drop_pinned(apps: Any, schema_editor: Any) -> None:
    AgentProfile = apps.get_model("profiles", "AgentProfile")
    for profile in AgentProfile.objects.filter(ranking_weights__has_key="pinned").only("pk", "ranking_weights"):
        weights = dict(profile.ranking_weights)
        weights.pop("pinned", None)
        AgentProfile.objects.filter(pk=profile.pk).update(ranking_weights=weights)


class Migration(migrations.Migration):
    dependencies = [("profiles", "0002_agentprofile_conversation_preset_and_more")]
    operations = [migrations.RunPython(drop_pinned, migrations.RunPython.noop)]
