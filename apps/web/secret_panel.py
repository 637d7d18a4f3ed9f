"""The "shown once" panel: a secret (a new API key, an invitation link) shown on the answer that made it.

Only a hash is stored, so the page that shows the secret is the one chance to copy it: it is the
answer to the POST itself (never a flash message, which would park it in a cookie or the session),
and it carries `Cache-Control: no-store`, so neither the browser's cache nor a proxy keeps it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpResponse
from django.utils.cache import add_never_cache_headers


@dataclass(frozen=True)
class ShownSecret:
    """What the panel shows: its heading, the field's label, the secret, what to do with it, and where next."""

    title: str
    label: str
    value: str
    help: str
    next_url: str = ""
    next_label: str = ""


def no_store(response: HttpResponse) -> HttpResponse:
    """`Cache-Control: max-age=0, no-cache, no-store, must-revalidate, private` (and `Expires` now)."""
    add_never_cache_headers(response)
    return response
