"""Schemathesis hooks of `make fuzz` (SCHEMATHESIS_HOOKS=scripts.fuzz_hooks).

The admin run fuzzes key management, and a key may revoke itself (that is allowed: a leaked key's
holder can retire it). A run that revoked its own key, or the keys of the runs after it, would
spend the rest of its cases on 401s; so revoking one of the run's keys (FUZZ_PROTECTED_KEYS, their
ids) is sent for key 0 instead, which answers 404 as any unknown key does.
"""

from __future__ import annotations

import os
from typing import Any

import schemathesis

PROTECTED = {value for value in os.environ.get("FUZZ_PROTECTED_KEYS", "").split(",") if value}


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    key_id = (case.path_parameters or {}).get("key_id")
    if key_id is not None and str(key_id) in PROTECTED and case.path.startswith("/api/v1/keys/"):
        case.path_parameters["key_id"] = 0
