"""Computing a conversation's communities: one per task, one per topic cluster, each summarised.

Summaries and titles are extractive by default; with an LLM configured they are the LLM's, written
in batches within the daily budget (apps/summaries/batch.py) and kept across recomputations while
a community's text is unchanged (`source_hash`: no second call). A community the LLM could not
write keeps the extractive text with `summary_note` saying why, and the sweep tries it again.

Runs in the background after message writes (apps/core/background.py) and on demand; never on
the assembly hot path. Recomputing replaces a layer's communities in one transaction, with keys
that stay the same for an unchanged conversation. A fingerprint of the messages (ids, content
hashes, task ids, embedded or not) skips layers that did not change.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from apps.conversations import message_summaries
from apps.conversations.clustering import topic_clusters
from apps.conversations.models import Community, CommunityKind, CommunityMember, GraphState
from apps.conversations.vectors import vector_fields, vectors_carried
from apps.core import background, tokenizer
from apps.core.versions import content_changed
from apps.layers.models import Item, ItemKind, Layer
from apps.summaries.batch import DEFERRED, Passage, Written, passages_summarize

TITLE_TOKENS = 20


@dataclass(frozen=True)
class _Message:
    id: int
    text: str
    task_ids: tuple[str, ...]
    created_at: datetime
    embedding: Any
    content_hash: str


def _load(layer_id: int) -> tuple[list[_Message], str]:
    rows = (
        Item.objects.filter(layer_id=layer_id, kind=ItemKind.MESSAGE)
        .order_by("created_at", "id")
        .values_list("id", "title", "content", "task_ids", "created_at", "embedding", "content_hash")
    )
    messages, digest = [], hashlib.sha256()
    for item_id, title, content, task_ids, created_at, embedding, content_hash in rows:
        text = f"{title}\n{content}" if title else content
        # Rows stored before writes dropped repeated task ids may hold one twice: one membership.
        messages.append(_Message(item_id, text, tuple(dict.fromkeys(task_ids)), created_at, embedding, content_hash))
        digest.update(f"{item_id}:{content_hash}:{','.join(task_ids)}:{embedding is not None};".encode())
    return messages, digest.hexdigest()


@dataclass(frozen=True)
class _Group:
    kind: str
    key: str
    members: list[_Message]

    @property
    def passage(self) -> Passage:
        return Passage(texts=tuple(m.text for m in self.members))

    @property
    def source_hash(self) -> str:
        """What its summary and title are written from: a task's key is in its title, a topic's is not."""
        key = self.key if self.kind == CommunityKind.TASK else ""
        return Passage(texts=(self.kind, key, self.passage.digest)).digest


def _group_rows(groups: list[_Group], written: list[Written]) -> list[dict[str, Any]]:
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    rows = []
    for group, text in zip(groups, written, strict=True):
        title = f"Task {group.key}: {text.title}" if group.kind == CommunityKind.TASK else text.title
        rows.append(
            {
                "kind": group.kind,
                "key": group.key,
                "title": title[:500],
                "summary": text.summary,
                "summary_tokens": tokenizer.count_tokens(text.summary, encoding),
                "summary_provider": text.provider,
                "summary_note": text.note[:300],
                "source_hash": group.source_hash,
                "first_at": group.members[0].created_at,
                "last_at": group.members[-1].created_at,
                "members": [m.id for m in group.members],
            }
        )
    return rows


def _written(layer: Layer, groups: list[_Group], *, llm_now: bool) -> list[Written]:
    """Each group's summary and title: an LLM's kept from the last run when its text is unchanged (no
    call), the rest written now, batched (apps/summaries/batch.py); extractive without an LLM."""
    kept: dict[str, Written] = {}
    if settings.SUMMARY_PROVIDER == "llm":
        rows = Community.objects.filter(layer=layer, summary_provider__startswith="llm:").values_list(
            "source_hash", "kind", "key", "title", "summary", "summary_provider"
        )
        for source_hash, kind, key, title, summary, provider in rows:
            raw = title.removeprefix(f"Task {key}: ") if kind == CommunityKind.TASK else title
            kept[source_hash] = Written(summary=summary, title=raw, provider=provider)
    missing = [g for g in groups if g.source_hash not in kept]
    fresh = passages_summarize(
        workspace_id=layer.workspace_id,
        passages=[g.passage for g in missing],
        summary_tokens=settings.COMMUNITY_SUMMARY_TOKENS,
        title_tokens=TITLE_TOKENS,
        llm_now=llm_now,
    )
    kept |= {g.source_hash: w for g, w in zip(missing, fresh, strict=True)}
    return [kept[g.source_hash] for g in groups]


def _groups(messages: list[_Message]) -> list[_Group]:
    by_task: dict[str, list[_Message]] = defaultdict(list)
    for m in messages:
        for task in m.task_ids:
            by_task[task].append(m)
    out = [
        _Group(CommunityKind.TASK, task, members)
        for task, members in sorted(by_task.items())
        if len(members) >= settings.COMMUNITY_TASK_MIN_MESSAGES
    ]
    embedded = [m for m in messages if m.embedding is not None][-settings.COMMUNITY_MAX_MESSAGES :]
    clusters = topic_clusters([m.embedding for m in embedded], min_size=settings.COMMUNITY_MIN_MESSAGES)
    for number, indices in enumerate(clusters, start=1):
        out.append(_Group(CommunityKind.TOPIC, f"topic-{number}", [embedded[i] for i in indices]))
    return out


def communities_replace(
    *,
    layer: Layer,
    groups: list[dict[str, Any]],
    now: datetime,
    state: dict[str, Any] | None = None,
    written: Sequence[message_summaries.Written] = (),
) -> list[Community] | None:
    """Replace the layer's communities with `groups` (kind, key, title, summary, ..., member ids),
    store the messages' `written` summaries and, given `state`, record what they were computed from;
    None when the layer is gone."""
    with transaction.atomic():
        # One writer per layer at a time: the after-write task, the sweep and an on-demand POST may overlap.
        if Layer.objects.select_for_update().filter(pk=layer.pk).first() is None:
            return None
        wanted = {i for g in groups for i in g["members"]} | {w.item_id for w in written}
        alive = set(Item.objects.filter(pk__in=wanted).values_list("pk", flat=True)) if wanted else set()
        carried = vectors_carried(layer_id=layer.pk)
        Community.objects.filter(layer=layer).delete()
        created = Community.objects.bulk_create(
            [
                Community(
                    workspace_id=layer.workspace_id,
                    layer=layer,
                    computed_at=now,
                    **{k: v for k, v in g.items() if k != "members"},
                    **vector_fields(g, carried),
                )
                for g in groups
            ]
        )
        CommunityMember.objects.bulk_create(
            [
                CommunityMember(community=c, item_id=i)
                for c, g in zip(created, groups, strict=True)
                for i in dict.fromkeys(g["members"])  # once each, whatever the caller's list repeats
                if i in alive  # a message deleted since it was read
            ]
        )
        message_summaries.messages_written_store(written=written, alive=alive, now=now)
        if state is not None:
            GraphState.objects.update_or_create(layer=layer, defaults={**state, "computed_at": now})
        content_changed(layer.workspace_id)  # cached contexts may hold the old summaries
        if any(c.embedding is None for c in created):
            from apps.conversations.tasks import embed_communities  # tasks import this module

            background.enqueue(embed_communities, layer.pk)  # after commit: never waits for the model
    return created


def communities_refresh(
    *, layer_id: int, force: bool = False, now: datetime | None = None, llm_now: bool = False
) -> list[Community] | None:
    """Recompute the layer's communities; None when nothing changed since the last run (unless
    `force`) or the layer no longer exists.

    Only a background task passes `llm_now`: a request (the API's recompute, an import, an erasure)
    never waits on the LLM; what it would have asked is written extractively, saying so, and a
    background run is queued to ask it."""
    now = now or timezone.now()
    layer = Layer.objects.filter(pk=layer_id).first()
    if layer is None:
        return None
    messages, fingerprint = _load(layer_id)
    state = GraphState.objects.filter(layer=layer).first()
    if not force and state is not None and state.fingerprint == fingerprint and not state.summaries_pending:
        return None
    groups = _groups(messages)
    rows = _group_rows(groups, _written(layer, groups, llm_now=llm_now))
    written = message_summaries.messages_written(
        workspace_id=layer.workspace_id,
        messages=[message_summaries.Message(m.id, m.text, m.content_hash) for m in messages],
        llm_now=llm_now,
    )
    created = communities_replace(
        layer=layer,
        groups=rows,
        now=now,
        written=written,
        state={
            "fingerprint": fingerprint,
            "message_count": len(messages),
            "pending_embeddings": sum(1 for m in messages if m.embedding is None),
            # an LLM configured but not used (failing, budget spent): the sweep tries again
            "summaries_pending": any(row["summary_note"] for row in rows) or any(w.note for w in written),
        },
    )
    if any(row["summary_note"] == DEFERRED for row in rows) or any(w.note == DEFERRED for w in written):
        from apps.conversations.tasks import refresh_communities  # tasks import this module

        background.enqueue(refresh_communities, layer_id)  # the LLM asked in the background, after this write
    return created


def layers_needing_refresh() -> list[int]:
    """Layers with messages whose communities were never computed, or whose messages changed or
    were still waiting for embeddings when they were (one aggregate query)."""
    rows = (
        Item.objects.filter(kind=ItemKind.MESSAGE)
        .values("layer_id")
        .annotate(n=Count("id"), last=Max("updated_at"))
        .filter(
            Q(layer__graph_state__isnull=True)
            | Q(layer__graph_state__pending_embeddings__gt=0)
            | Q(layer__graph_state__summaries_pending=True)
            | ~Q(n=F("layer__graph_state__message_count"))
            | Q(last__gt=F("layer__graph_state__computed_at"))
        )
        .values_list("layer_id", flat=True)
    )
    return sorted(set(rows))
