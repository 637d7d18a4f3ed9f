"""The sidebar: one entry per area, in order; an area whose URL is not mounted (yet) is left out."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse


@dataclass(frozen=True)
class NavEntry:
    label: str
    url: str
    current: bool


# (label, URL name, URL names that mark it current, staff only)
AREAS: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("Dashboard", "web:dashboard", ("dashboard",), False),
    ("Layers", "web:layers", ("layers", "layer"), False),
    ("Profiles", "web:profiles", ("profiles", "profile"), False),
    ("Preview", "web:preview", ("preview",), False),
    ("Sessions", "web:sessions", ("sessions", "session"), False),
    ("Console", "console:records", ("records", "trace", "replay", "state", "state-layer"), True),
    ("Patterns", "web:patterns", ("patterns", "pattern"), False),
)


def nav_entries(request: HttpRequest) -> list[NavEntry]:
    """The entries this user sees, the current area marked."""
    match = request.resolver_match
    current = (match.namespace, match.url_name) if match else ("", "")
    entries = []
    for label, name, names, staff_only in AREAS:
        if staff_only and not request.user.is_staff:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        namespace = name.split(":")[0]
        entries.append(NavEntry(label=label, url=url, current=current[0] == namespace and current[1] in names))
    return entries
