"""Typed readers for environment settings that fail loudly on a bad value."""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    """The variable's value, or `default` when unset."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    """A boolean flag; anything but a recognised spelling is a configuration error."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """An integer, optionally bounded below."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be >= {minimum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """A float within optional bounds."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from exc
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise ImproperlyConfigured(f"{name} must be within [{minimum}, {maximum}], got {value}")
    return value


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of a fixed set of strings."""
    value = os.environ.get(name, default).strip()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [part.strip() for part in raw.split(",") if part.strip()]


def env_rate(name: str, default: str) -> tuple[int, int] | None:
    """A rate limit written `N/S` (N hits per S seconds); `off` (or `0`) turns it off (None)."""
    raw = os.environ.get(name, default).strip().lower()
    if raw in {"off", "0", "none"}:
        return None
    count, _, seconds = raw.partition("/")
    if not (count.isdigit() and seconds.isdigit() and int(count) > 0 and int(seconds) > 0):
        raise ImproperlyConfigured(f"{name} must look like 600/60 (hits per seconds) or off, got {raw!r}")
    return int(count), int(seconds)
