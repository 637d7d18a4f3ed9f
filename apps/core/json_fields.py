"""Serializer fields for free-form JSON that PostgreSQL stores as jsonb.

jsonb cannot hold the NUL character (U+0000) in any string, key or value: PostgreSQL refuses the
row with a DataError, which would surface as a 500. DRF's CharField already rejects NUL
(ProhibitNullCharactersValidator); these fields do the same for nested JSON, so the error is a
400 named after the field (e.g. `invalid_metadata`).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

NUL = "\x00"


def contains_nul(value: Any) -> bool:
    """True when a string anywhere in `value` (dict keys included, at any depth) holds NUL.

    Iterative, so a deeply nested document cannot exhaust the recursion limit.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if NUL in node:
                return True
        elif isinstance(node, dict):
            for key, child in node.items():
                if isinstance(key, str) and NUL in key:
                    return True
                stack.append(child)
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
    return False


def reject_nul(value: Any) -> None:
    """A DRF validator: NUL anywhere in the JSON value is a validation error."""
    if contains_nul(value):
        raise serializers.ValidationError("must not contain the NUL character (\\u0000) in any key or value")


class JsonObjectField(serializers.DictField):
    """A JSON object (any nested values) storable in a jsonb column: no NUL anywhere."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["validators"] = [*kwargs.get("validators", ()), reject_nul]
        super().__init__(**kwargs)
