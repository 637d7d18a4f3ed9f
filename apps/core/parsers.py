"""The API's JSON parser: DRF's, with the checks of apps/core/strict_json.py (one place for every body)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from rest_framework.parsers import JSONParser

from apps.core.strict_json import loads_strict


class StrictJSONParser(JSONParser):
    """Refuses NaN/Infinity, NUL, lone surrogates and deep nesting with a 400 and a stable code."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        return loads_strict(stream.read())
