"""Communities of a session's messages and the state of their last computation.

Messages themselves are `layers.Item` rows of kind "message" (parent/children links, task ids,
importance); this app adds what groups them, and how often each was served (`ItemAccess`).
"""

from __future__ import annotations

from django.db import models

from apps.layers.models import Item, Layer
from apps.workspaces.models import Workspace


class ItemAccess(models.Model):
    """How often an item was served in assembled context or history answers, and when last.

    Kept apart from the item's row: an access counted on the item itself rewrote the whole row
    (its vector among it) and added entries to every index, the HNSW index included, for each
    item of each assembly. Written in one batched upsert after the response, never per item.
    """

    item = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="access")
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "layers_itemaccess"

    def __str__(self) -> str:
        return f"{self.item_id}: {self.access_count}"


class CommunityKind(models.TextChoices):
    TASK = "task", "Task"
    TOPIC = "topic", "Topic"


class Community(models.Model):
    """A group of one session's messages with its own summary: all messages of a task, or a topic
    cluster of their embeddings. In assembled context it stands in for its far-away members.

    `key` is the task id, or "topic-N" numbered by each cluster's earliest message, so
    recomputing an unchanged conversation yields the same keys.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="communities")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="communities")
    kind = models.CharField(max_length=8, choices=CommunityKind.choices)
    key = models.CharField(max_length=200)
    title = models.CharField(max_length=500)
    summary = models.TextField()
    summary_tokens = models.PositiveIntegerField(default=0)
    # Who wrote the summary and title ("extractive", "llm:<model>"), why not the configured LLM (empty:
    # it did, or none is configured), and the hash of what they were written from (kept across runs).
    summary_provider = models.CharField(max_length=64, default="extractive")
    summary_note = models.CharField(max_length=300, blank=True, default="")
    source_hash = models.CharField(max_length=64, blank=True, default="")
    # The title and summary's passage vector (apps/conversations/vectors.py), compared with the query
    # in process (apps/core/stored_vectors.py): assembly ranks the community by relevance like an item.
    # None until the background embeds it; kept across recomputations that leave the text unchanged.
    embedding = models.BinaryField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    members: models.ManyToManyField[Item, CommunityMember] = models.ManyToManyField(
        Item, through="CommunityMember", related_name="communities"
    )
    first_at = models.DateTimeField()
    last_at = models.DateTimeField()
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["layer", "kind", "key"], name="uniq_community_key")]
        indexes = [models.Index(fields=["workspace", "layer"])]
        verbose_name_plural = "communities"

    def __str__(self) -> str:
        return f"{self.kind}:{self.key}"


class CommunityMember(models.Model):
    """One message's membership of one community."""

    community = models.ForeignKey(Community, on_delete=models.CASCADE, related_name="memberships")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="memberships")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["community", "item"], name="uniq_community_member")]

    def __str__(self) -> str:
        return f"{self.item_id} in {self.community_id}"


class GraphState(models.Model):
    """What a session's communities were computed from, so the periodic sweep skips unchanged ones."""

    layer = models.OneToOneField(Layer, on_delete=models.CASCADE, related_name="graph_state")
    fingerprint = models.CharField(max_length=64)
    message_count = models.PositiveIntegerField(default=0)
    pending_embeddings = models.PositiveIntegerField(default=0)  # > 0: the sweep looks again
    summaries_pending = models.BooleanField(default=False)  # an LLM summary fell back: the sweep looks again
    computed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"graph state of {self.layer_id}"


class MessageSummary(models.Model):
    """A long message's summary and title written by the configured LLM: its SUMMARY and TITLE rungs in
    assembled context (apps/conversations/message_summaries.py). Only LLM text is kept here: without an
    LLM the engine derives the rungs from the text itself (its leading sentences, its first words).

    `content_hash` is the item's when it was written: an edited message is written again, and assembly
    uses a row only while the hashes agree. `note` (with empty texts): why the LLM did not write it.
    """

    item = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="written_summary")
    content_hash = models.CharField(max_length=64)
    summary = models.TextField(blank=True, default="")
    title = models.CharField(max_length=500, blank=True, default="")
    provider = models.CharField(max_length=64)
    note = models.CharField(max_length=300, blank=True, default="")
    written_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"summary of {self.item_id} by {self.provider}"
