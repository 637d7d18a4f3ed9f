"""Writes for relationships: typed, directed edges between two items of one workspace.

Assembly follows them (`expand_related`) in both directions; both ends must be items of the caller's
workspace, and an item outside it is "not found", exactly like any other id from elsewhere.
"""

from __future__ import annotations

import math

from django.db import IntegrityError, transaction

from apps.core.errors import Conflict, DomainError, InvalidInput, NotFound
from apps.core.field_errors import INVALID_TARGET, INVALID_WEIGHT
from apps.layers.errors import DUPLICATE_RELATIONSHIP, INVALID_RELATIONSHIP_KIND, ITEM_NOT_FOUND
from apps.layers.models import Item, Relationship, RelationshipKind
from apps.workspaces.models import Workspace


def relationship_errors(
    *, workspace: Workspace, source_id: int, target_id: int, kind: str, weight: float = 1.0
) -> dict[str, DomainError]:
    """Every reason this edge cannot be made, by field ({} when fine); `relationship_create` raises the first."""
    errors: dict[str, DomainError] = {}
    if kind not in RelationshipKind.values:
        errors["kind"] = InvalidInput(
            f"kind must be one of {', '.join(RelationshipKind.values)}", code=INVALID_RELATIONSHIP_KIND
        )
    if not (math.isfinite(weight) and 0.0 <= weight <= 1.0):
        errors["weight"] = InvalidInput("weight must be within [0, 1]", code=INVALID_WEIGHT)
    found = set(Item.objects.filter(workspace=workspace, pk__in=[source_id, target_id]).values_list("pk", flat=True))
    for name, item_id in (("source", source_id), ("target", target_id)):
        if item_id not in found:
            errors[name] = NotFound(f"item {item_id} not found", code=ITEM_NOT_FOUND)
    if source_id == target_id:
        errors.setdefault("target", InvalidInput("an item cannot be related to itself", code=INVALID_TARGET))
    elif not errors and Relationship.objects.filter(source_id=source_id, target_id=target_id, kind=kind).exists():
        errors["target"] = Conflict(f"item {source_id} already {kind} item {target_id}", code=DUPLICATE_RELATIONSHIP)
    return errors


def relationship_create(
    *, workspace: Workspace, source_id: int, target_id: int, kind: str, weight: float = 1.0
) -> Relationship:
    """Relate two items of `workspace` (source → target); the assembly cache sees it at once (content version)."""
    errors = relationship_errors(
        workspace=workspace, source_id=source_id, target_id=target_id, kind=kind, weight=weight
    )
    if errors:
        raise next(iter(errors.values()))
    try:
        with transaction.atomic():
            return Relationship.objects.create(
                workspace=workspace, source_id=source_id, target_id=target_id, kind=kind, weight=weight
            )
    except IntegrityError as exc:  # the same edge made concurrently since the check
        raise Conflict(f"item {source_id} already {kind} item {target_id}", code=DUPLICATE_RELATIONSHIP) from exc


def relationship_delete(*, relationship: Relationship) -> None:
    relationship.delete()
