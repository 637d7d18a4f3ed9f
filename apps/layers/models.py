"""The layer hierarchy, content items and their relationships."""

from __future__ import annotations

from enum import StrEnum

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func, Q

from apps.layers.fields import EmbeddingField
from apps.workspaces.models import Workspace


class LayerKind(models.TextChoices):
    COMPANY = "company", "Company"
    ORG = "org", "Org"
    TEAM = "team", "Team"
    PROJECT = "project", "Project"
    MULTI_SESSION = "multi_session", "Multi-session"
    SESSION = "session", "Session"


# Hierarchy order: a parent must have a strictly lower rank than its child.
KIND_RANK: dict[str, int] = {kind: rank for rank, kind in enumerate(LayerKind.values)}


class Layer(models.Model):
    """A node of the company → org → team → project → multi_session → session hierarchy."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="layers")
    kind = models.CharField(max_length=16, choices=LayerKind.choices)
    name = models.CharField(max_length=200)
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    external_id = models.CharField(max_length=200, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "kind", "external_id"],
                condition=Q(external_id__isnull=False),
                name="uniq_layer_external_id",
            ),
            models.UniqueConstraint(fields=["workspace"], condition=Q(kind="company"), name="uniq_company_root"),
            models.CheckConstraint(
                condition=Q(kind="company", parent__isnull=True) | ~Q(kind="company"), name="company_has_no_parent"
            ),
        ]
        indexes = [models.Index(fields=["workspace", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


class ItemKind(models.TextChoices):
    MESSAGE = "message", "Message"
    MEMORY = "memory", "Memory"
    PACKAGE = "package", "Package"
    SPEC = "spec", "Spec"
    DOCUMENT = "document", "Document"


# The `type` values each kind accepts ("" = untyped). Documents take any free type.
ITEM_TYPES: dict[str, tuple[str, ...]] = {
    ItemKind.MESSAGE: ("",),
    ItemKind.MEMORY: ("entity", "fact", "decision"),
    ItemKind.PACKAGE: ("", "research", "investigation", "strategy"),
    ItemKind.SPEC: ("requirement", "design", "task", "decision", "knowledge"),
}


class MessageRole(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"
    SYSTEM = "system", "System"
    TOOL = "tool", "Tool"


class Priority(models.TextChoices):
    CRITICAL = "critical", "Critical"
    HIGH = "high", "High"
    MEDIUM = "medium", "Medium"
    LOW = "low", "Low"


class Item(models.Model):
    """One unit of content in a layer: a message, memory, package, spec or document.

    `embedding` stays NULL until the background embedder fills it; until then the item is found
    by keyword search through the generated `search_vector` (searched in its copy, `ItemSearch`).
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="items")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="items")
    kind = models.CharField(max_length=16, choices=ItemKind.choices)
    type = models.CharField(max_length=32, blank=True, default="")
    title = models.CharField(max_length=500, blank=True, default="")
    content = models.TextField()
    external_id = models.CharField(max_length=200, null=True, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    content_hash = models.CharField(max_length=64)
    embedding = EmbeddingField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    importance = models.FloatField(default=0.5)
    pinned = models.BooleanField(default=False)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    # message
    role = models.CharField(max_length=16, choices=MessageRole.choices, blank=True, default="")
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="children")
    task_ids = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    # How helpful the item proved when served (0..1); strategies rank packages by it.
    helpfulness = models.FloatField(default=0.5)
    # memory
    confidence = models.FloatField(null=True, blank=True)
    # package
    priority = models.CharField(max_length=16, choices=Priority.choices, blank=True, default="")
    group_id = models.CharField(max_length=200, blank=True, default="")
    agent_types = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    source_refs = ArrayField(models.CharField(max_length=1000), default=list, blank=True)
    # Duplicates (apps/layers/duplicates.py): how many writes this item stands for (itself and the
    # repeats merged into it) and the external ids those repeats came with.
    seen_count = models.PositiveIntegerField(default=1)
    merged_external_ids = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    # False when its writer asked to keep it apart (`on_duplicate: "keep"`): never merged into another.
    mergeable = models.BooleanField(default=True)
    # The newer item that replaces this one (apps/layers/supersession.py): left out of contexts by
    # default, still listed and found by the history tool.
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes_items"
    )
    # Maintained by PostgreSQL itself, so bulk inserts and raw updates can never leave it stale.
    search_vector = models.GeneratedField(
        expression=SearchVector("title", weight="A", config="english")
        + SearchVector("content", weight="B", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["layer", "external_id"], condition=Q(external_id__isnull=False), name="uniq_item_external_id"
            ),
            # Scores live in 0..1. In PostgreSQL NaN sorts above every number, so these also refuse NaN:
            # a NaN helpfulness once committed made every later strategies list and context request fail.
            models.CheckConstraint(
                condition=Q(helpfulness__gte=0.0, helpfulness__lte=1.0), name="item_helpfulness_0_1"
            ),
            models.CheckConstraint(condition=Q(importance__gte=0.0, importance__lte=1.0), name="item_importance_0_1"),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | Q(confidence__gte=0.0, confidence__lte=1.0),
                name="item_confidence_0_1",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "layer", "kind"]),
            models.Index(fields=["workspace", "created_at"]),
            models.Index(fields=["workspace"], condition=Q(embedding__isnull=True), name="item_pending_embedding"),
            # Pinned items join every assembly's candidates: without this, finding them scans the table.
            models.Index(fields=["workspace", "layer"], condition=Q(pinned=True), name="item_pinned"),
            # The turns next to a hit (apps/assembly/adjacency.py): one index step each way, where
            # the (workspace, layer, kind) index read and sorted the whole session (2.7-4.0 -> 0.35 ms
            # for 10 hits at 100k items).
            models.Index(fields=["layer", "created_at", "id"], condition=Q(kind="message"), name="item_message_order"),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.title or self.content[:40]}"


class ItemSearch(models.Model):
    """Keyword search's narrow copy of an item: its `search_vector`, its length and the filter columns.

    Keyword search reads every match's row; an item's row (its 1.5 kB vector among it) fills a page
    with about 4 items, this one with about 40, so the same matches read ~10x fewer pages (the keyword
    statement took 0.7x the CPU at 100k items). Kept by triggers on layers_item (migration 0009), not
    by the services, so no write path can leave it stale: the ORM, bulk COPY, raw SQL and deletes.
    `item_id` is a plain id: deleting an item deletes its copy through the trigger.
    """

    item_id = models.BigIntegerField(primary_key=True)
    workspace_id = models.BigIntegerField()
    layer_id = models.BigIntegerField()
    kind = models.CharField(max_length=16)
    type = models.CharField(max_length=32)
    created_at = models.DateTimeField()
    confidence = models.FloatField(null=True)
    group_id = models.CharField(max_length=200)
    search_vector = SearchVectorField()
    length = models.IntegerField()  # length(search_vector): its number of lexemes, BM25's document length

    class Meta:
        indexes = [
            GinIndex(fields=["search_vector"], name="itemsearch_vector_gin"),
            # A workspace's newest items (keyword_search.py's window past the score cap): its oldest and newest
            # ids, an index step each, and the window's rows as a bitmap ANDed with a common word's matches.
            models.Index(fields=["workspace_id", "item_id"], name="itemsearch_workspace_item"),
            # The same window as GIN keys: each lexeme tagged with the workspace and the item's bucket of 4,096
            # ids (migration 0016's function), so a common word is matched in the newest buckets alone.
            GinIndex(
                Func(
                    F("search_vector"),
                    F("workspace_id"),
                    F("item_id"),
                    function="itemsearch_bucket_lexemes",
                    output_field=ArrayField(models.TextField()),
                ),
                name="itemsearch_bucket_lexeme_gin",
                fastupdate=False,  # no pending list: a search would match its many keys against every row of it
            ),
        ]

    def __str__(self) -> str:
        return f"item {self.item_id}"


class RelationshipKind(models.TextChoices):
    RELATES_TO = "relates_to", "Relates to"
    SUPPORTS = "supports", "Supports"
    CONTRADICTS = "contradicts", "Contradicts"
    DERIVED_FROM = "derived_from", "Derived from"


class Relationship(models.Model):
    """A typed, directed edge between two items of one workspace, for related-item expansion."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="relationships")
    source = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="outgoing")
    target = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="incoming")
    kind = models.CharField(max_length=16, choices=RelationshipKind.choices)
    weight = models.FloatField(default=1.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "kind"], name="uniq_relationship"),
            models.CheckConstraint(condition=~Q(source=models.F("target")), name="relationship_not_self"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"


class EmbeddingClaim(models.Model):
    """An item the embedder is embedding now, until `claimed_until` (a lease).

    The embedder claims a batch in one short transaction and embeds with no transaction open, so
    PATCH and DELETE of those items never wait on it; a worker that dies leaves its claims to expire.
    Kept apart from the item's row so a claim never rewrites the item (its generated search column).
    `item_id` is a plain id, not a foreign key: a claim must never lock or block its item.
    """

    item_id = models.BigIntegerField(primary_key=True)
    claimed_until = models.DateTimeField()

    def __str__(self) -> str:
        return f"item {self.item_id} until {self.claimed_until:%H:%M:%S}"


class EmbeddingSpace(models.Model):
    """The embedding model the stored vectors are kept for (one row), so a change of it is seen at start.

    `label` is "provider:model", as each vector's `Item.embedding_model`. After a change, the other
    model's vectors are cleared in batches by id (`clear_from_id`: the next id to clear; null once
    done) and re-embedded; `reembedding` stays true until nothing is pending
    (apps/layers/embedding_space.py).
    """

    label = models.CharField(max_length=200)
    previous_label = models.CharField(max_length=200, blank=True, default="")
    changed_at = models.DateTimeField()
    clear_from_id = models.BigIntegerField(null=True, blank=True)
    reembedding = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.label


class Detector(StrEnum):
    """Who proposed a supersession (`SupersessionProposal.detector`): the rules, or the configured LLM."""

    RULES = "rules"
    LLM = "llm"


class ProposalState(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    REJECTED = "rejected", "Rejected"


class SupersessionProposal(models.Model):
    """A proposal that `new` supersedes `old` (same subject, newer, saying something else), made by the
    detector (apps/layers/supersession.py) for an operator to accept or reject; one per pair."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="supersession_proposals")
    layer = models.ForeignKey(Layer, on_delete=models.CASCADE, related_name="supersession_proposals")
    old = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="proposed_superseded")
    new = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="proposed_superseding")
    similarity = models.FloatField()
    reason = models.CharField(max_length=300)
    detector = models.CharField(max_length=32, default=Detector.RULES)
    state = models.CharField(max_length=16, choices=ProposalState.choices, default=ProposalState.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["old", "new"], name="uniq_supersession_pair"),
            models.CheckConstraint(condition=~Q(old=models.F("new")), name="supersession_not_self"),
        ]
        indexes = [models.Index(fields=["workspace", "state", "layer"])]

    def __str__(self) -> str:
        return f"{self.new_id} supersedes {self.old_id}? ({self.state})"
