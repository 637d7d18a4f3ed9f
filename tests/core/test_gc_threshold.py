"""The server's workers collect their youngest garbage generation less often than Python's default
(contextarch/asgi.py): a context request allocates thousands of short-lived objects."""

from __future__ import annotations

import gc

from django.conf import settings


def test_it_sets_the_young_generation_threshold_when_the_app_loads() -> None:
    import contextarch.asgi  # noqa: F401

    assert settings.GC_YOUNG_THRESHOLD > 700  # Python's default
    assert gc.get_threshold()[0] == settings.GC_YOUNG_THRESHOLD
