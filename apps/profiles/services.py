"""Writes for agent profiles: create, replace, delete, and the items a profile excludes."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields

from django.conf import settings
from django.db import IntegrityError, transaction

from apps.core.errors import Conflict, InvalidInput, NotFound
from apps.core.field_errors import (
    INVALID_CONTEXT_POSITION,
    INVALID_CONTEXT_WINDOW,
    INVALID_CONVERSATION_PRESET,
    INVALID_NAME,
    INVALID_PREFERRED_FORMAT,
    INVALID_RANKING_WEIGHTS,
    INVALID_RETRIEVAL_LIMIT,
    INVALID_SAFETY_MARGIN,
    INVALID_TOKEN_BUDGET,
    INVALID_TYPE_FILTERS,
)
from apps.engine.rank import RankWeights
from apps.layers.errors import ITEM_NOT_FOUND
from apps.layers.models import Item
from apps.layers.selectors import item_ids_known
from apps.profiles.errors import DUPLICATE_PROFILE, TOO_MANY_EXCLUDED_ITEMS
from apps.profiles.models import AgentProfile, ContextPosition, ConversationPreset, OutputFormat
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget, Workspace

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]{1,100}")
MAX_CONTEXT_WINDOW = 2_000_000
MAX_RETRIEVAL_LIMIT = 1000
MAX_TYPE_FILTERS = 50
MAX_TYPE_FILTER_CHARS = 32
MAX_SAFETY_MARGIN = 0.9
MAX_EXCLUDED_ITEMS = 1000
# The engine's own list: a weight it does not read cannot be stored ("pinned" was accepted and
# ignored; pinned items go first whatever the weights).
RANKING_WEIGHT_KEYS = frozenset(f.name for f in fields(RankWeights))
# The engine divides by the half-life; the floor matches settings.RECENCY_HALF_LIFE_DAYS's.
MIN_RECENCY_HALF_LIFE_DAYS = 0.01


@dataclass(frozen=True)
class ProfileInput:
    """Every configurable field of a profile; the defaults are the model's (a PUT resets to them)."""

    agent_type: str = ""
    model: str = ""
    context_window: int | None = None
    token_budget: int | None = None
    retrieval_limit: int | None = None
    preferred_format: str = OutputFormat.MARKDOWN
    type_filters: list[str] = field(default_factory=list)
    template: str = ""
    conversation_preset: str = ConversationPreset.BALANCED
    ranking_function: str = "default"
    ranking_weights: dict[str, float] = field(default_factory=dict)
    safety_margin: float = 0.15
    context_position: str = ContextPosition.AFTER


def check_name(name: str) -> None:
    """A name is 1-100 of [A-Za-z0-9_.-] and not "." or "..", so it is one clean URL path segment."""
    if not NAME_PATTERN.fullmatch(name) or name in {".", ".."}:
        raise InvalidInput("name must be 1-100 characters of A-Z a-z 0-9 _ . - (not . or ..)", code=INVALID_NAME)


def _check_weights(weights: object) -> None:
    if not isinstance(weights, dict):
        raise InvalidInput("ranking_weights must be an object of numbers", code=INVALID_RANKING_WEIGHTS)
    unknown = sorted(str(key) for key in set(weights) - RANKING_WEIGHT_KEYS)
    if unknown:
        raise InvalidInput(
            f"unknown ranking weights: {', '.join(unknown)}",
            code=INVALID_RANKING_WEIGHTS,
            details={"unknown": unknown, "allowed": sorted(RANKING_WEIGHT_KEYS)},
        )
    for key, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise InvalidInput(f"ranking weight {key} must be a finite number >= 0", code=INVALID_RANKING_WEIGHTS)
    half_life = weights.get("recency_half_life_days")
    if half_life is not None and half_life < MIN_RECENCY_HALF_LIFE_DAYS:
        raise InvalidInput(
            f"recency_half_life_days must be at least {MIN_RECENCY_HALF_LIFE_DAYS}", code=INVALID_RANKING_WEIGHTS
        )


def profile_check(*, data: ProfileInput) -> None:
    """Raise InvalidInput unless `data` is a configuration assembly can use as it stands.

    The API edge checks shapes first; this also guards callers without a serializer (the admin,
    whose JSON fields accept anything).
    """
    window = data.context_window
    if window is not None and not 1 <= window <= MAX_CONTEXT_WINDOW:
        raise InvalidInput(f"context_window must be between 1 and {MAX_CONTEXT_WINDOW}", code=INVALID_CONTEXT_WINDOW)
    if data.token_budget is not None:
        cap = min(window, settings.MAX_TOKEN_BUDGET) if window is not None else settings.MAX_TOKEN_BUDGET
        if not 1 <= data.token_budget <= cap:
            raise InvalidInput(
                f"token_budget must be between 1 and {cap}" + (" (the context_window)" if cap == window else ""),
                code=INVALID_TOKEN_BUDGET,
                details={"max": cap},
            )
    if data.retrieval_limit is not None and not 1 <= data.retrieval_limit <= MAX_RETRIEVAL_LIMIT:
        raise InvalidInput(f"retrieval_limit must be between 1 and {MAX_RETRIEVAL_LIMIT}", code=INVALID_RETRIEVAL_LIMIT)
    if data.preferred_format not in OutputFormat.values:
        raise InvalidInput(
            f"preferred_format must be one of {', '.join(OutputFormat.values)}", code=INVALID_PREFERRED_FORMAT
        )
    if data.conversation_preset not in ConversationPreset.values:
        raise InvalidInput(
            f"conversation_preset must be one of {', '.join(ConversationPreset.values)}",
            code=INVALID_CONVERSATION_PRESET,
        )
    filters = data.type_filters
    if (
        not isinstance(filters, list)
        or len(filters) > MAX_TYPE_FILTERS
        or any(not isinstance(t, str) or not t or len(t) > MAX_TYPE_FILTER_CHARS for t in filters)
    ):
        raise InvalidInput(
            f"type_filters takes at most {MAX_TYPE_FILTERS} types of 1-{MAX_TYPE_FILTER_CHARS} characters",
            code=INVALID_TYPE_FILTERS,
        )
    _check_weights(data.ranking_weights)
    if data.context_position not in ContextPosition.values:
        raise InvalidInput(
            f"context_position must be one of {', '.join(ContextPosition.values)}", code=INVALID_CONTEXT_POSITION
        )
    if not (math.isfinite(data.safety_margin) and 0.0 <= data.safety_margin <= MAX_SAFETY_MARGIN):
        raise InvalidInput(f"safety_margin must be between 0 and {MAX_SAFETY_MARGIN}", code=INVALID_SAFETY_MARGIN)


def _duplicate(name: str) -> Conflict:
    return Conflict(f"a profile named {name!r} exists", code=DUPLICATE_PROFILE, details={"name": name})


def _save(profile: AgentProfile, fields: list[str] | None = None) -> None:
    """Save (only `fields`, if given), turning a lost race on the unique name into the same 409 as the pre-check."""
    try:
        with transaction.atomic():
            profile.save(update_fields=fields)
    except IntegrityError as exc:
        taken = AgentProfile.objects.filter(workspace_id=profile.workspace_id, name=profile.name)
        if taken.exclude(pk=profile.pk).exists():
            raise _duplicate(profile.name) from exc
        raise


def excluded_items_check(*, workspace_id: int, item_ids: Sequence[int]) -> list[int]:
    """`item_ids` without repeats, in their order, if they fit a profile's list: at most
    MAX_EXCLUDED_ITEMS (`too_many_excluded_items`), each an item of the workspace (404 `item_not_found`,
    every missing id named: another workspace's item is as missing as a deleted one)."""
    ids = list(dict.fromkeys(int(i) for i in item_ids))
    if len(ids) > MAX_EXCLUDED_ITEMS:
        raise InvalidInput(
            f"a profile excludes at most {MAX_EXCLUDED_ITEMS} items",
            code=TOO_MANY_EXCLUDED_ITEMS,
            details={"max": MAX_EXCLUDED_ITEMS, "given": len(ids)},
        )
    missing = sorted(set(ids) - item_ids_known(workspace_id=workspace_id, item_ids=ids))
    if missing:
        raise NotFound(f"item {missing[0]} not found", code=ITEM_NOT_FOUND, details={"excluded_items": missing})
    return ids


def profile_create(
    *, workspace: Workspace, name: str, data: ProfileInput, excluded_items: Sequence[int] = ()
) -> AgentProfile:
    """A new profile; a name already used in the workspace is a Conflict (`duplicate_profile`);
    `excluded_items` as `excluded_items_check` takes them."""
    check_name(name)
    profile_check(data=data)
    excluded = excluded_items_check(workspace_id=workspace.pk, item_ids=excluded_items)
    if AgentProfile.objects.filter(workspace=workspace, name=name).exists():
        raise _duplicate(name)
    profile = AgentProfile(workspace=workspace, name=name, excluded_items=excluded, **asdict(data))
    _save(profile)
    audit.record(
        workspace_id=workspace.pk,
        target_kind=AuditTarget.PROFILE,
        action="create",
        target_id=profile.pk,
        target_label=name,
        new={"name": name, **asdict(data), **({"excluded_items": excluded} if excluded else {})},
    )
    return profile


def profile_update(
    *, profile: AgentProfile, name: str, data: ProfileInput, excluded_items: Sequence[int] | None = None
) -> AgentProfile:
    """Replace the whole configuration (fields `data` leaves at their defaults are reset), maybe renaming.

    The excluded items are not settings: None keeps them (a settings form or PUT does not undo the
    preview's clicks); a list replaces them, checked by `excluded_items_check`.
    """
    check_name(name)
    profile_check(data=data)
    excluded = (
        None
        if excluded_items is None
        else excluded_items_check(workspace_id=profile.workspace_id, item_ids=excluded_items)
    )
    changed = {**asdict(data), **({"excluded_items": excluded} if excluded is not None else {})}
    before = {"name": profile.name, **audit.fields_of(profile, list(changed))}
    if name != profile.name:
        taken = AgentProfile.objects.filter(workspace_id=profile.workspace_id, name=name)
        if taken.exclude(pk=profile.pk).exists():
            raise _duplicate(name)
        profile.name = name
    for key, value in changed.items():
        setattr(profile, key, value)
    _save(profile, ["name", *changed, "updated_at"])  # not the excluded items when kept: a click meanwhile stays
    if excluded is None:
        profile.refresh_from_db(fields=["excluded_items"])
    audit.record(
        workspace_id=profile.workspace_id,
        target_kind=AuditTarget.PROFILE,
        action="update",
        target_id=profile.pk,
        target_label=profile.name,
        old=before,
        new={"name": profile.name, **changed},
    )
    return profile


def profile_delete(*, profile: AgentProfile) -> None:
    """Delete a profile; requests that still name it fall back to the defaults with a warning."""
    audit.record(
        workspace_id=profile.workspace_id,
        target_kind=AuditTarget.PROFILE,
        action="delete",
        target_id=profile.pk,
        target_label=profile.name,
        old={"name": profile.name},
    )
    profile.delete()


def profile_item_exclude(*, profile: AgentProfile, item: Item, excluded: bool = True) -> AgentProfile:
    """Leave `item` out of every context assembled with `profile` (traced `profile_excluded`), or, with
    `excluded=False`, let it in again. The list is read and written under the profile's row lock, so two
    clicks at once lose neither; an item of another workspace is NotFound, as if it did not exist."""
    if item.workspace_id != profile.workspace_id:
        raise NotFound(f"item {item.pk} not found", code=ITEM_NOT_FOUND)
    with transaction.atomic():
        locked = AgentProfile.objects.select_for_update().get(pk=profile.pk)
        before = [int(i) for i in locked.excluded_items or []]
        after = [i for i in before if i != item.pk] + ([item.pk] if excluded else [])
        if len(after) > MAX_EXCLUDED_ITEMS:
            raise InvalidInput(f"a profile excludes at most {MAX_EXCLUDED_ITEMS} items", code=TOO_MANY_EXCLUDED_ITEMS)
        if after != before:
            locked.excluded_items = after
            locked.save(update_fields=["excluded_items", "updated_at"])
            audit.record(
                workspace_id=locked.workspace_id,
                target_kind=AuditTarget.PROFILE,
                action="update",
                target_id=locked.pk,
                target_label=locked.name,
                old={"excluded_items": before},
                new={"excluded_items": after},
            )
    profile.excluded_items = locked.excluded_items
    return profile
