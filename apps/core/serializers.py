"""What every API input serializer shares: unknown fields are refused, floats are finite.

`StrictSerializer` is the base of every `Input` (and of the serializers nested in one): a key the
serializer does not know is a 400 `unknown_fields` (a typo such as `tokn_budget` used to answer
201 and do something else than asked). `FiniteFloatField` is the float of every input: DRF's
FloatField takes the strings "NaN" and "Infinity" and passes NaN through min/max validators.

A serializer's fields are copies of its declared ones, made per instance. DRF makes them by
calling each field's `__init__` again (`Field.__deepcopy__`), ~0.5 ms for the 25 fields of the
context request on every call; `StrictSerializer` copies the attributes of a field built once
per class instead (`fresh_fields`), which gives the same unbound field.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core import errors
from apps.core.error_catalogue import ErrorCode
from apps.core.errors import InvalidInput


class UnknownFields(InvalidInput):
    code = errors.UNKNOWN_FIELDS.code


def _copyable(field: serializers.Field) -> bool:
    """A plain field (and its child's): no nested serializer, whose state is per instance."""
    if isinstance(field, serializers.BaseSerializer):
        return False
    child = getattr(field, "child", None)
    return child is None or _copyable(child)


def _fresh(field: serializers.Field) -> serializers.Field:
    """An unbound copy of the unbound `field`: its attributes (validators, choices and messages
    are shared, as DRF's deepcopy shares validators; nothing changes them after `__init__`), and a
    child of its own, bound to the copy (`__init__` bound the template's to the template)."""
    clone = object.__new__(type(field))
    clone.__dict__.update(field.__dict__)
    child = field.__dict__.get("child")
    if child is not None:
        own_child = _fresh(child)
        own_child.parent = clone  # type: ignore[assignment]  # a child field's parent is its field, not a serializer
        vars(clone)["child"] = own_child
    return clone


_templates: dict[type, dict[str, serializers.Field]] = {}


def fresh_fields(cls: type[serializers.Serializer]) -> dict[str, serializers.Field]:
    """What `Serializer.get_fields` returns for `cls` (copies of its declared fields), made cheaply."""
    templates = _templates.get(cls)
    if templates is None:
        templates = copy.deepcopy(cls._declared_fields)
        for field in templates.values():
            field.validators  # noqa: B018 - built once here (lazily per copy otherwise)
        _templates[cls] = templates
    return {name: _fresh(f) if _copyable(f) else copy.deepcopy(f) for name, f in templates.items()}


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses keys it has no writable field for (400 `unknown_fields`)."""

    # The code of the refusal; only the layer config endpoint keeps its older `invalid_fields`.
    unknown_fields_code: ErrorCode = errors.UNKNOWN_FIELDS

    def get_fields(self) -> dict[str, serializers.Field]:
        return fresh_fields(type(self))

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = {name for name, field in self.fields.items() if not field.read_only}
            unknown = sorted(str(key) for key in data if key not in known)
            if unknown:
                shown = ", ".join(name[:100] for name in unknown[:20])
                raise UnknownFields(
                    f"unknown fields: {shown}",
                    code=self.unknown_fields_code,
                    details={"fields": unknown[:100], "allowed": sorted(known)},
                )
        return super().to_internal_value(data)


class FiniteFloatField(serializers.FloatField):
    """A float that is a real number: no NaN or Infinity (not even as strings), no booleans."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        value = super().to_internal_value(data)
        if not math.isfinite(value):
            self.fail("invalid")
        return value


class FloatVectorField(serializers.ListField):
    """A list of finite numbers (a query vector), checked in one pass when it is one.

    A 384-number vector through a FloatField per number cost ~1.5 ms of every vector request; a
    list of plain ints and floats is checked here at once, anything else goes the per-number way,
    so its errors name the bad positions as before.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=FiniteFloatField(), **kwargs)

    def to_internal_value(self, data: Any) -> list[float]:
        if type(data) is list and all(type(x) is float or type(x) is int for x in data):
            try:
                values = [float(x) for x in data]
            except OverflowError:  # an int past float's range: the per-number path says where
                values = [math.inf]
            if all(map(math.isfinite, values)):
                return values
        result: list[float] = super().to_internal_value(data)
        return result
