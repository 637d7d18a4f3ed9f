"""A layer's effective summary configuration: its stored LayerConfig over the per-kind defaults.

Validated on load: a stored value out of range (written around the service, e.g. by raw SQL)
is logged and replaced by the kind's default, so one bad row never stops the sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError

from apps.core.errors import INVALID_FIELDS, InvalidInput
from apps.core.field_errors import INVALID_PERSONALIZATION, field_code
from apps.layers.models import Layer, LayerKind
from apps.summaries.models import LAYER_CONFIG_DEFAULTS, LayerConfig, Personalization
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget

log = logging.getLogger(__name__)

# Company and org summaries are organisation-wide: never personalized.
GENERIC_KINDS = frozenset({LayerKind.COMPANY, LayerKind.ORG})
EDITABLE = ("update_interval_seconds", "update_on_changes", "personalization", "skip_if_unchanged")


@dataclass(frozen=True)
class SummaryConfig:
    """What decides when a layer's summaries are regenerated and for whom."""

    layer_id: int
    kind: str
    update_interval_seconds: int
    update_on_changes: int
    personalization: str
    skip_if_unchanged: bool
    changes_since_summary: int
    last_summarized_at: datetime | None

    @property
    def personalized(self) -> bool:
        return self.personalization != Personalization.GENERIC and self.kind not in GENERIC_KINDS


def _defaults(layer: Layer) -> LayerConfig:
    interval, changes, personalization = LAYER_CONFIG_DEFAULTS[layer.kind]
    return LayerConfig(
        layer=layer, update_interval_seconds=interval, update_on_changes=changes, personalization=personalization
    )


def config_create(*, layer: Layer) -> LayerConfig:
    """A new layer's configuration: its kind's defaults (in the transaction that creates the layer)."""
    interval, changes, personalization = LAYER_CONFIG_DEFAULTS[layer.kind]
    return LayerConfig.objects.create(
        layer=layer, update_interval_seconds=interval, update_on_changes=changes, personalization=personalization
    )


def config_of(*, layer: Layer, stored: LayerConfig | None = None) -> SummaryConfig:
    """The effective, validated configuration of `layer` (defaults when none is stored)."""
    if stored is None:
        stored = LayerConfig.objects.filter(layer=layer).first()
    row = stored or _defaults(layer)
    values: dict[str, Any] = {name: getattr(row, name) for name in EDITABLE}
    try:
        row.clean()
    except ValidationError as exc:
        defaults = _defaults(layer)
        for name in exc.message_dict:
            log.warning("layer %s: invalid %s=%r, using the default", layer.pk, name, values.get(name))
            values[name] = getattr(defaults, name)
    return SummaryConfig(
        layer_id=layer.pk,
        kind=layer.kind,
        changes_since_summary=row.changes_since_summary,
        last_summarized_at=row.last_summarized_at,
        **values,
    )


def configs_of(*, layers: Iterable[Layer]) -> dict[int, SummaryConfig]:
    """The effective configuration of each layer, by id (one query for the stored ones)."""
    layers = list(layers)
    stored = {row.layer_id: row for row in LayerConfig.objects.filter(layer__in=[layer.pk for layer in layers])}
    return {layer.pk: config_of(layer=layer, stored=stored.get(layer.pk)) for layer in layers}


def config_stored(*, layer: Layer) -> bool:
    """Whether the layer has a configuration of its own stored (else it runs on its kind's defaults)."""
    return LayerConfig.objects.filter(layer=layer).exists()


def config_errors(*, layer: Layer, changes: dict[str, Any]) -> dict[str, str]:
    """Every reason `changes` cannot be applied to `layer`'s configuration, by field ({} when fine).

    The one validator: the API takes the first, the config page and the admin show them all at once.
    """
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        return {"__all__": f"cannot change {', '.join(sorted(unknown))}"}
    errors: dict[str, str] = {}
    if layer.kind in GENERIC_KINDS and changes.get("personalization", Personalization.GENERIC) != "generic":
        errors["personalization"] = f"{layer.kind} summaries are organisation-wide and stay generic"
    row = LayerConfig.objects.filter(layer=layer).first() or _defaults(layer)
    for name, value in changes.items():
        setattr(row, name, value)
    try:
        row.clean()
    except ValidationError as exc:
        for name, messages in exc.message_dict.items():
            errors.setdefault(name, messages[0])
    return errors


def config_update(*, layer: Layer, changes: dict[str, Any]) -> SummaryConfig:
    """Apply validated changes to the layer's configuration (created from defaults if missing)."""
    errors = config_errors(layer=layer, changes=changes)
    if "__all__" in errors:
        raise InvalidInput(errors["__all__"], code=INVALID_FIELDS)
    if "personalization" in errors and layer.kind in GENERIC_KINDS:
        raise InvalidInput(errors["personalization"], code=INVALID_PERSONALIZATION)
    if errors:
        name = next(iter(errors))
        raise InvalidInput(f"{name} {errors[name]}", code=field_code(name), details={k: [v] for k, v in errors.items()})
    row = LayerConfig.objects.filter(layer=layer).first() or _defaults(layer)
    before = audit.fields_of(row, list(changes))
    for name, value in changes.items():
        setattr(row, name, value)
    row.save()
    audit.record(
        workspace_id=layer.workspace_id,
        target_kind=AuditTarget.CONFIG,
        action="update",
        target_id=layer.pk,
        target_label=layer.name,
        old=before,
        new=audit.fields_of(row, list(changes)),
    )
    return config_of(layer=layer, stored=row)
