"""The background embedder embeds each passage with its layer's name in front (contextual embedding)."""

from __future__ import annotations

import numpy as np

from apps.core import embeddings
from apps.layers.embedder import items_embed_pending, passage_text
from apps.layers.models import Item
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant


def test_a_passage_is_embedded_with_its_layer_name_and_title(tenant: Tenant) -> None:
    layer = layer_create(workspace=tenant.workspace, kind="team", name="Biscuit the beagle", parent=tenant.root)
    (item,) = items_create(
        layer=layer,
        items=[ItemInput(kind="memory", type="fact", title="Weigh-in", content="He's down to 22.5 pounds.")],
    )
    items_embed_pending(workspace_id=tenant.workspace.pk)

    stored = np.asarray(Item.objects.get(pk=item.pk).embedding, dtype=np.float32)
    expected = embeddings.embed_passages(["Biscuit the beagle\nWeigh-in\nHe's down to 22.5 pounds."])[0]
    plain = embeddings.embed_passages(["He's down to 22.5 pounds."])[0]
    assert np.allclose(stored, expected, atol=1e-5)
    assert not np.allclose(stored, plain, atol=1e-3)


def test_passage_text_skips_empty_parts() -> None:
    assert passage_text(layer_name="Team", title="", content="Body") == "Team\nBody"
    assert passage_text(layer_name="", title="", content="Body") == "Body"
