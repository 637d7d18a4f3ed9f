"""Give every workspace made without one its company root layer (and the layer's configuration).

Before `workspace_created`, a workspace saved outside `workspace_create` (the stock admin form) had no
company layer and no way to get one: nothing can be created without a root to hang it under.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

# The company defaults of apps.layers.models.LAYER_CONFIG_DEFAULTS, frozen as they were at this migration.
INTERVAL_SECONDS, ON_CHANGES, PERSONALIZATION = 3600, 10, "generic"


def forwards(apps: Any, schema_editor: Any) -> None:
    Workspace = apps.get_model("workspaces", "Workspace")
    Layer = apps.get_model("layers", "Layer")
    LayerConfig = apps.get_model("layers", "LayerConfig")
    rootless = Workspace.objects.exclude(pk__in=Layer.objects.filter(kind="company").values("workspace_id"))
    for workspace in rootless:
        layer = Layer.objects.create(workspace=workspace, kind="company", name=workspace.name)
        LayerConfig.objects.create(
            layer=layer,
            update_interval_seconds=INTERVAL_SECONDS,
            update_on_changes=ON_CHANGES,
            personalization=PERSONALIZATION,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("layers", "0006_embedding_claim"),
        ("workspaces", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
