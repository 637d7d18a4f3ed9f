"""JSON rendering with orjson for the hot API answers (the context assembly and its preview).

Byte for byte what DRF's JSONRenderer writes for the same data in the cases these answers hold
(compact, UTF-8, no ASCII escaping); orjson serializes a 4,000-token context several times faster.
Types orjson does not know (Decimal, lazy strings, ...) go through DRF's encoder.
"""

from __future__ import annotations

from typing import Any

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_fallback = JSONEncoder()


def _default(value: Any) -> Any:
    return _fallback.default(value)


class OrjsonRenderer(JSONRenderer):
    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        if data is None:
            return b""
        return orjson.dumps(data, default=_default, option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS)
