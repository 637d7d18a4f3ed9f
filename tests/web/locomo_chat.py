"""A real two-person chat for the page tests: LoCoMo conv-49 (Evan and Sam, 509 turns in 25 sittings,
the chat of issue 19), written through the layers service as a client would load it, every turn embedded.

Read from ../shared/locomo-dev/ at run time (its README: never copied into the repository); a run
without it skips the tests that need it.

The first chat of a test process is embedded by the real embedder (`wait_embedded`, as the
evaluation loads its conversations). Its vectors are kept for the process, keyed by the exact
passage the embedder embedded (layer name, title, content), so a later test's chat stores the same
vectors with its turns instead of embedding 509 turns again (minutes on a loaded 2-core machine).
A turn whose passage is not known yet waits for the embedder as the first did.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.db import transaction

from apps.bench.evaluation.data import Question, dataset_subset
from apps.bench.evaluation.load import wait_embedded
from apps.bench.evaluation.locomo import DEFAULT_PATH, locomo_load
from apps.core import embeddings
from apps.core.versions import content_changed
from apps.layers.embedder import passage_text
from apps.layers.models import Item, ItemKind, Layer, LayerKind
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Workspace

SAMPLE = "conv-49"
CAR_QUESTION = "What kind of car does Evan drive?"

# Passage (what the embedder embeds) -> (model label, vector): this process's embedded turns.
_vectors: dict[str, tuple[str, object]] = {}


@dataclass(frozen=True)
class LocomoChat:
    layer: Layer  # the multi-session layer (the questions' layer)
    sessions: list[Layer]  # one per sitting, in order
    turns: int
    questions: dict[str, Question]  # by question text


def locomo_chat_create(*, workspace: Workspace, parent: Layer) -> LocomoChat:
    """conv-49 under `parent`, one session layer per sitting, each in one bulk write; returns once
    every turn has its embedding."""
    if not DEFAULT_PATH.exists():
        pytest.skip(f"the LoCoMo development set is not at {DEFAULT_PATH}")
    dataset = dataset_subset(dataset=locomo_load(path=DEFAULT_PATH), conversations=[SAMPLE])
    (conversation,) = dataset.conversations
    top = layer_create(
        workspace=workspace, kind=LayerKind.MULTI_SESSION, name="Evan and Sam", parent=parent, external_id=SAMPLE
    )
    sessions = []
    for session in conversation.sessions:
        with transaction.atomic():  # the turns and their known vectors commit together: nothing is claimed between
            layer = layer_create(
                workspace=workspace, kind=LayerKind.SESSION, name=session.name, parent=top, external_id=session.id
            )
            items = items_create(
                layer=layer,
                items=[
                    ItemInput(
                        kind=ItemKind.MESSAGE,
                        role=turn.role,
                        content=turn.content,
                        external_id=turn.id,
                        created_at=turn.created_at,
                        metadata=dict(turn.metadata),
                    )
                    for turn in session.turns
                ],
            )
            _store_known_vectors(layer, items)
        sessions.append(layer)
    content_changed(workspace.pk)
    wait_embedded(workspace_id=workspace.pk, progress=lambda _message: None)
    _remember_vectors(workspace)
    return LocomoChat(
        layer=top,
        sessions=sessions,
        turns=len(conversation.turns),
        questions={question.question: question for question in dataset.questions},
    )


def _store_known_vectors(layer: Layer, items: list[Item]) -> None:
    model = embeddings.model_label()
    known = []
    for item in items:
        found = _vectors.get(passage_text(layer_name=layer.name, title=item.title, content=item.content))
        if found is not None and found[0] == model:
            item.embedding, item.embedding_model = found[1], model
            known.append(item)
    Item.objects.bulk_update(known, ["embedding", "embedding_model"])


def _remember_vectors(workspace: Workspace) -> None:
    rows = Item.objects.filter(workspace=workspace, embedding__isnull=False).values_list(
        "layer__name", "title", "content", "embedding_model", "embedding"
    )
    for layer_name, title, content, model, vector in rows:
        _vectors[passage_text(layer_name=layer_name, title=title, content=content)] = (model, vector)
