"""`manage.py embedding_dimensions N`: resize the item embedding column to N dimensions (every vector dropped)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.layers.embedding_space import column_resize


class Command(BaseCommand):
    help = (
        "Resize layers_item.embedding to N dimensions for a model of that size: every stored vector is "
        "dropped and the HNSW index rebuilt, so the embedder re-embeds every item (set EMBEDDING_DIMENSIONS=N "
        "too, and restart the servers)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dimensions", type=int)

    def handle(self, *args: Any, **options: Any) -> None:
        dimensions = options["dimensions"]
        if not 1 <= dimensions <= 16_000:
            raise CommandError("dimensions must be between 1 and 16000 (pgvector's limit)")
        cleared = column_resize(dimensions=dimensions)
        self.stdout.write(f"layers_item.embedding now holds {dimensions} dimensions; {cleared} vectors dropped")
