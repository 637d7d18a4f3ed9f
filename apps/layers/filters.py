"""Item filters shared by vector search, keyword search and the ORM, so all three agree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from django.db.models import Q, QuerySet


def id_array(ids: Iterable[int]) -> str:
    """Ids as one PostgreSQL array literal ('{1,2,3}'), for `= ANY(%s::bigint[])` in raw SQL.

    Django's psycopg cursor binds on the client: a list parameter is dumped element by element in
    Python (a third of a millisecond for a workspace's ~200 layer ids, in every statement that
    filters on them), one string is quoted once.
    """
    return "{" + ",".join([str(int(i)) for i in ids]) + "}"


@dataclass(frozen=True)
class ItemFilters:
    """Which items of a workspace a search may return."""

    workspace_id: int
    layer_ids: tuple[int, ...]
    kinds: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    min_confidence: float | None = None  # items without a confidence pass
    group_id: str = ""  # items of another group are left out; ungrouped items pass

    def sql(self) -> tuple[list[str], list[Any]]:
        """WHERE clauses (ANDed) and their parameters, for raw SQL on layers_item."""
        where = ["workspace_id = %s", "layer_id = ANY(%s::bigint[])"]
        params: list[Any] = [self.workspace_id, self.layer_array]
        if self.kinds:
            where.append("kind = ANY(%s)")
            params.append(list(self.kinds))
        if self.types:
            where.append("type = ANY(%s)")
            params.append(list(self.types))
        if self.since:
            where.append("created_at >= %s")
            params.append(self.since)
        if self.until:
            where.append("created_at <= %s")
            params.append(self.until)
        if self.min_confidence is not None:
            where.append("(confidence IS NULL OR confidence >= %s)")
            params.append(self.min_confidence)
        if self.group_id:
            where.append("(group_id = '' OR group_id = %s)")
            params.append(self.group_id)
        return where, params

    @cached_property
    def layer_array(self) -> str:
        """`layer_ids` as an array literal, built once: a request's searches and fetches all filter on it."""
        return id_array(self.layer_ids)

    def q(self) -> Q:
        """The same filters as a Q object."""
        q = Q(workspace_id=self.workspace_id, layer_id__any=self.layer_ids)  # one array parameter
        if self.kinds:
            q &= Q(kind__in=self.kinds)
        if self.types:
            q &= Q(type__in=self.types)
        if self.since:
            q &= Q(created_at__gte=self.since)
        if self.until:
            q &= Q(created_at__lte=self.until)
        if self.min_confidence is not None:
            q &= Q(confidence__isnull=True) | Q(confidence__gte=self.min_confidence)
        if self.group_id:
            q &= Q(group_id="") | Q(group_id=self.group_id)
        return q

    def apply(self, items: QuerySet[Any]) -> QuerySet[Any]:
        return items.filter(self.q())
