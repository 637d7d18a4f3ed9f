"""The summaries app's parts of a workspace archive: layer configurations and summaries (apps/core/archive).

A personalized summary names its reader by username; it is restored for a member of the target
workspace of that name, and left out otherwise (the next run makes one for the readers there). A
summary's vector travels with `?embeddings=1` like an item's; without it (or of another model) the
restored rows are embedded in the background, as after any write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from apps.core import background
from apps.core.archive.parts import (
    ArchivePart,
    ExportScope,
    RestoreScope,
    Row,
    RowError,
    batched,
    register,
    stored_vector_export,
    stored_vector_restore,
)
from apps.summaries.models import Depth, LayerConfig, Summary
from apps.summaries.tasks import embed_summaries
from apps.workspaces.selectors import member_ids_by_username

CONFIG_FIELDS = (
    "update_interval_seconds",
    "update_on_changes",
    "personalization",
    "skip_if_unchanged",
    "changes_since_summary",
    "last_summarized_at",
)
SUMMARY_FIELDS = ("depth", "text", "token_count", "source_hash", "generated_at", "provider", "stale")


def configs_export(scope: ExportScope) -> Iterable[Row]:
    rows = LayerConfig.objects.filter(layer__workspace_id=scope.workspace_id).order_by("layer_id")
    for row in rows.values("layer_id", *CONFIG_FIELDS).iterator(chunk_size=2000):
        yield {"layer": row.pop("layer_id"), **row}


def configs_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    """The root's configuration (made with the workspace) is updated; the others are created."""
    existing = dict(LayerConfig.objects.filter(layer__workspace_id=scope.workspace_id).values_list("layer_id", "pk"))
    count = 0
    for batch in batched(rows, 1000):
        built = []
        for row in batch:
            config = LayerConfig(layer_id=scope.ids.get("layer", row["layer"]), **{f: row[f] for f in CONFIG_FIELDS})
            config.clean()  # bulk_create skips `save`'s validation
            if config.layer_id in existing:
                LayerConfig.objects.filter(pk=existing[config.layer_id]).update(**{f: row[f] for f in CONFIG_FIELDS})
            else:
                built.append(config)
        LayerConfig.objects.bulk_create(built)
        count += len(batch)
    return count


def summaries_export(scope: ExportScope) -> Iterable[Row]:
    rows = Summary.objects.filter(workspace_id=scope.workspace_id).order_by("id")
    fields: tuple[str, ...] = ("layer_id", "personalized_for__username", "personalization_ref", *SUMMARY_FIELDS)
    if scope.embeddings:
        fields = (*fields, "embedding", "embedding_model")
    for row in rows.values(*fields).iterator(chunk_size=2000):
        out = {"layer": row.pop("layer_id"), "personalized_for": row.pop("personalized_for__username"), **row}
        yield stored_vector_export(out) if scope.embeddings else out


def summaries_restore(scope: RestoreScope, rows: Iterator[Row]) -> int:
    readers = member_ids_by_username(workspace_id=scope.workspace_id)
    count, pending = 0, False
    for batch in batched(rows, 1000):
        built = []
        for row in batch:
            if row["depth"] not in Depth.values:
                raise RowError(f"unknown depth {row['depth']!r}")
            reader = row["personalized_for"]
            if reader is not None and reader not in readers:
                continue  # no member of that name here
            ref = dict(row["personalization_ref"] or {})
            if "items" in ref:
                ref["items"] = [i for i in (scope.ids.ids.get("item", {}).get(old) for old in ref["items"]) if i]
            built.append(
                Summary(
                    workspace_id=scope.workspace_id,
                    layer_id=scope.ids.get("layer", row["layer"]),
                    personalized_for_id=readers.get(reader) if reader is not None else None,
                    personalization_ref=ref,
                    **{f: row[f] for f in SUMMARY_FIELDS},
                    **stored_vector_restore(scope, row),
                )
            )
        Summary.objects.bulk_create(built)
        pending = pending or any(summary.embedding is None for summary in built)
        count += len(built)
    if pending:
        background.enqueue(embed_summaries, None)
    return count


def register_parts() -> None:
    register(
        ArchivePart(
            name="layer_configs",
            order=40,
            export=configs_export,
            restore=configs_restore,
            occupied=lambda workspace_id: False,  # made with each layer: the layers part decides
            count=lambda s: LayerConfig.objects.filter(layer__workspace_id=s.workspace_id).count(),
        ),
        ArchivePart(
            name="summaries",
            order=50,
            export=summaries_export,
            restore=summaries_restore,
            occupied=lambda workspace_id: Summary.objects.filter(workspace_id=workspace_id).exists(),
            count=lambda s: Summary.objects.filter(workspace_id=s.workspace_id).count(),
        ),
    )
