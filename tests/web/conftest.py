"""The `browser` fixture for page tests and `people` with each role; the helpers (login, axe, 390 px) are in
tests/web/harness.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Browser, sync_playwright

from apps.workspaces.models import Role
from tests.conftest import Tenant
from tests.web.harness import CHROMIUM, CHROMIUM_ARGS, PASSWORD, PageUser, page_user_create


@pytest.fixture
def browser() -> Iterator[Browser]:
    """Headless Debian chromium; one per test (request it after the fixtures that write rows)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail("Debian chromium is required: apt-get install -y chromium (make test installs it)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass(frozen=True)
class People:
    """Members of `tenant` (acme) with each role, a superuser member of none, and a staff developer of globex."""

    viewer: PageUser
    operator: PageUser
    developer: PageUser
    admin: PageUser
    superuser: PageUser
    outsider: PageUser


@pytest.fixture
def people(tenant: Tenant, other_tenant: Tenant) -> People:
    """Write them before asking for `browser` (see tests/web/harness.py)."""
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_superuser(username="root", password=PASSWORD, email="root@example.com")
    return People(
        viewer=page_user_create(workspace=tenant.workspace, username="vera", role=Role.VIEWER),
        operator=page_user_create(workspace=tenant.workspace, username="otto", role=Role.OPERATOR, is_staff=True),
        developer=page_user_create(workspace=tenant.workspace, username="dana", role=Role.DEVELOPER),
        admin=page_user_create(workspace=tenant.workspace, username="ada", role=Role.ADMIN),
        superuser=PageUser(
            username="root", password=PASSWORD, workspace=tenant.workspace, role=Role.ADMIN, is_staff=True
        ),
        outsider=page_user_create(
            workspace=other_tenant.workspace, username="olga", role=Role.DEVELOPER, is_staff=True
        ),
    )
