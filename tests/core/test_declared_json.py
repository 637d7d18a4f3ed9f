"""A response shape written once: `declared_json` gives what the serializer's declared fields give."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from rest_framework import serializers

from apps.core.declared_json import declared_json


@dataclass(frozen=True)
class Row:
    id: int
    at: datetime
    note: str | None
    tags: tuple[str, ...]


class RowOutput(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    note = serializers.CharField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())


class PageOutput(serializers.Serializer):
    rows = RowOutput(many=True)
    first = RowOutput(source="*")


def test_it_gives_the_declared_fields_in_their_order_with_their_conversions() -> None:
    row = Row(id=3, at=datetime(2026, 5, 1, 12, tzinfo=UTC), note=None, tags=("a", "b"))
    expected = {"id": 3, "at": "2026-05-01T12:00:00Z", "note": None, "tags": ["a", "b"]}
    assert declared_json(RowOutput)(row) == expected
    assert list(declared_json(RowOutput)(row)) == list(serializers.Serializer.to_representation(RowOutput(), row))


@dataclass(frozen=True)
class Page(Row):
    rows: tuple[Row, ...]


def test_it_follows_nested_serializers_many_and_whole() -> None:
    row = Row(id=1, at=datetime(2026, 5, 1, tzinfo=UTC), note="n", tags=())
    page = declared_json(PageOutput)(Page(id=9, at=row.at, note=None, tags=(), rows=(row, row)))
    assert [r["note"] for r in page["rows"]] == ["n", "n"] and page["first"]["id"] == 9


def test_it_refuses_a_source_that_is_not_an_attribute_path() -> None:
    class Odd(serializers.Serializer):
        total = serializers.IntegerField(source="items.count()")

    with pytest.raises(ValueError, match="not an attribute path"):
        declared_json(Odd)
