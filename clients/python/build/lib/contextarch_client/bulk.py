"""The bookkeeping of a bulk load shared by both clients: chunks, the progress bar, partial failure."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tqdm import tqdm

from contextarch_client.errors import ContextArchError
from contextarch_client.models import BulkLoadResult


@dataclass
class BulkPlan:
    items: list[Mapping[str, Any]]
    chunk_size: int
    progress: bool
    ids: list[int] = field(default_factory=list)
    count: int = 0
    bar: Any = None

    def __post_init__(self) -> None:
        if not 1 <= self.chunk_size <= 1000:
            raise ValueError("chunk_size must be 1..1000 (the API's bulk limit)")
        self.bar = tqdm(total=len(self.items), unit="item", desc="bulk load", disable=not self.progress)

    def chunks(self) -> Iterator[list[Mapping[str, Any]]]:
        for start in range(0, len(self.items), self.chunk_size):
            yield self.items[start : start + self.chunk_size]

    def done(self, chunk: list[Mapping[str, Any]], ids: list[int]) -> None:
        self.ids += ids
        self.count += 1
        self.bar.update(len(chunk))

    def fail(self, exc: ContextArchError) -> None:
        self.bar.close()
        exc.details = {**exc.details, "created_ids": list(self.ids), "failed_chunk": self.count}
        raise exc

    def finish(self, *, searchable: bool) -> BulkLoadResult:
        self.bar.close()
        return BulkLoadResult(ids=self.ids, chunks=self.count, searchable=searchable)
