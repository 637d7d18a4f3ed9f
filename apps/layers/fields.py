"""The item embedding column: pgvector `vector(N)` where the extension exists, `real[]` otherwise.

The fallback lets the service run (keyword search only) on a PostgreSQL without pgvector.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.layers import vectors


class EmbeddingField(models.Field):
    """A fixed-dimension float vector, stored as pgvector when available."""

    description = "Embedding vector"
    empty_strings_allowed = False

    def db_type(self, connection: BaseDatabaseWrapper) -> str:
        if vectors.vector_available(connection):
            return f"vector({settings.EMBEDDING_DIMENSIONS})"
        return "real[]"

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> np.ndarray | None:
        return vectors.parse_db_vector(value)

    def to_python(self, value: Any) -> np.ndarray | None:
        return vectors.parse_db_vector(value)

    def get_db_prep_value(self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False) -> Any:
        return vectors.to_db_vector(value, connection)

    def value_to_string(self, obj: models.Model) -> str:
        value = self.value_from_object(obj)
        return "" if value is None else ",".join(f"{x:.6f}" for x in value)
