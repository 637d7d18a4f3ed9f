"""What higher apps add to a trace's answer (`GET /api/v1/traces/{id}/`) from their own rows, by name.

Filled in the higher app's `AppConfig.ready`, so that assembly never imports it (dependencies point
one way): the proxy adds `proxy`, the call that carried the assembly (its upstream, model, the usage
the upstream reported and our count). A section answers None for a trace it knows nothing of.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# (workspace id, trace id) -> a JSON-safe value, or None
TraceSection = Callable[[int, str], Any]

trace_sections: dict[str, TraceSection] = {}
