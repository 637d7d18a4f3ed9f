"""The sidebar: one entry per area, in order; an area whose URL is not mounted (yet) is left out."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse

from apps.web.workspace_choice import WorkspaceAccess


@dataclass(frozen=True)
class NavEntry:
    label: str
    url: str
    current: bool


# (label, URL name, URL names that mark it current, for developers and admins only)
AREAS: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    ("Dashboard", "web:dashboard", ("dashboard",), False),
    ("Layers", "web:layers", ("layers", "layer"), False),
    ("Supersessions", "web:supersessions", ("supersessions",), False),
    ("Profiles", "web:profiles", ("profiles", "profile"), False),
    ("Preview", "web:preview", ("preview",), False),
    ("Sessions", "web:sessions", ("sessions", "session"), False),
    (
        "Experiments",
        "web:experiments",
        ("experiments", "experiment-set", "experiment-run", "experiment-set-upload", "experiment-run-start"),
        False,
    ),
    ("Console", "console:records", ("records", "trace", "replay", "state", "state-layer"), True),
    ("Patterns", "web:patterns", ("patterns", "pattern"), False),
    ("Templates", "web:templates", ("templates", "template", "template-new"), False),
    ("Strategies", "web:strategies", ("strategies", "strategy"), False),
    ("Redaction", "web:redaction", ("redaction",), False),
)


def nav_entries(request: HttpRequest, access: WorkspaceAccess) -> list[NavEntry]:
    """The entries this user sees in the current workspace, the current area marked."""
    match = request.resolver_match
    current = (match.namespace, match.url_name) if match else ("", "")
    entries = []
    for label, name, names, developers_only in AREAS:
        if developers_only and not access.can_develop:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        namespace = name.split(":")[0]
        entries.append(NavEntry(label=label, url=url, current=current[0] == namespace and current[1] in names))
    return entries
