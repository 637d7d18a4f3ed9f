"""The error catalogue: every public error code, with its HTTP status and default message, named once.

Each app keeps its codes in its own `errors.py` (Baserow's style), made with `error_code(...)`, and
raises them by name: `raise NotFound(f"layer {pk} not found", code=errors.LAYER_NOT_FOUND)`. A code
string is public (clients branch on it): it is registered once, by the lowest app that raises it, and
never changes when a field or a function is renamed. Validation errors of an input field map to a
code through `field_codes(...)`, not through the field's name. `apps.core` imports every app's
`errors` module when it is ready (the registry is filled in one place; core imports no app by name).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from django.core.exceptions import ImproperlyConfigured


@dataclass(frozen=True)
class ErrorCode:
    """One public error: the code clients branch on, its HTTP status and its default message."""

    code: str
    status: int
    message: str
    # Other statuses the same code is answered with somewhere (kept as they were: clients branch on the code).
    also: frozenset[int] = frozenset()


CATALOGUE: dict[str, ErrorCode] = {}
# The code of a validation error in a top-level input field (body key or query parameter), by field name.
FIELD_CODES: dict[str, ErrorCode] = {}
# What each API operation (by operationId) can answer with besides the codes every operation can and
# its input fields' (apps/core/schema.py adds those): declared next to the app's codes.
OPERATION_CODES: dict[str, tuple[ErrorCode, ...]] = {}
# The codes every API operation can answer with ("*"), or every operation of one HTTP method.
COMMON_CODES: dict[str, list[ErrorCode]] = {}


def error_code(code: str, status: int, message: str, *, also: tuple[int, ...] = ()) -> ErrorCode:
    """Register a code once; a second registration of the same code string is a configuration error."""
    entry = ErrorCode(code, status, message, frozenset(also))
    if CATALOGUE.setdefault(code, entry) is not entry:
        raise ImproperlyConfigured(f"error code {code!r} is catalogued twice")
    return entry


def field_codes(**codes: ErrorCode) -> None:
    """Map input fields to the code of their validation errors (`token_budget=INVALID_TOKEN_BUDGET`)."""
    for field, entry in codes.items():
        if FIELD_CODES.setdefault(field, entry) is not entry:
            raise ImproperlyConfigured(f"input field {field!r} is mapped to two codes")
        if CATALOGUE.get(entry.code) is not entry:
            raise ImproperlyConfigured(f"{entry.code!r} is not in the catalogue")


def operation_codes(**operations: tuple[ErrorCode, ...]) -> None:
    """Declare the codes of operations, by operationId (`v1_layers_create=(COMPANY_EXISTS, ...)`)."""
    for operation, codes in operations.items():
        if OPERATION_CODES.setdefault(operation, codes) is not codes:
            raise ImproperlyConfigured(f"the codes of {operation!r} are declared twice")


def common_codes(*codes: ErrorCode, methods: tuple[str, ...] = ("*",)) -> None:
    """Declare codes that every API operation (or every one of `methods`) can answer with."""
    for method in methods:
        COMMON_CODES.setdefault(method, []).extend(code for code in codes if code not in COMMON_CODES.get(method, []))


def catalogue_load() -> dict[str, ErrorCode]:
    """Import every app's `errors` module (and core's field codes), so the catalogue is complete."""
    from django.apps import apps
    from django.utils.module_loading import module_has_submodule

    import_module("apps.core.field_errors")
    for config in apps.get_app_configs():
        if config.name.startswith("apps.") and module_has_submodule(config.module, "errors"):
            import_module(f"{config.name}.errors")
    return CATALOGUE
