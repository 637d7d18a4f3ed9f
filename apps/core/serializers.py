"""What every API input serializer shares: unknown fields are refused, floats are finite.

`StrictSerializer` is the base of every `Input` (and of the serializers nested in one): a key the
serializer does not know is a 400 `unknown_fields` (a typo such as `tokn_budget` used to answer
201 and do something else than asked). `FiniteFloatField` is the float of every input: DRF's
FloatField takes the strings "NaN" and "Infinity" and passes NaN through min/max validators.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from apps.core.errors import InvalidInput


class UnknownFields(InvalidInput):
    code = "unknown_fields"


class StrictSerializer(serializers.Serializer):
    """An input serializer that refuses keys it has no writable field for (400 `unknown_fields`)."""

    # The code of the refusal; only the layer config endpoint keeps its older `invalid_fields`.
    unknown_fields_code = UnknownFields.code

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
