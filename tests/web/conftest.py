"""`people` with each role for the page tests; the helpers (login, axe, 390 px) are in tests/web/harness.py and
the `browser` fixture in tests/support/browser.py."""

from __future__ import annotations

import pytest

from apps.workspaces.models import Role
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD, PageUser, page_user_create
from tests.web.people import People


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
