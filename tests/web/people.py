"""The members of the page tests' workspace, one per role (the `people` fixture in tests/web/conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.web.harness import PageUser


@dataclass(frozen=True)
class People:
    """Members of `tenant` (acme) with each role, a superuser member of none, and a staff developer of globex."""

    viewer: PageUser
    operator: PageUser
    developer: PageUser
    admin: PageUser
    superuser: PageUser
    outsider: PageUser
