"""A committed project for the cancel tests of the preview page and of the API's server (a client
that leaves mid-way): the fixtures, the /metrics count of cancelled assemblies, and whether a
statement of the server waits on the test's lock."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from apps.core import background
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant, make_tenant

CANCELLED = re.compile(r'^context_architect_assemblies_cancelled_total\{stage="([^"]+)"\} (\S+)$', re.M)


@pytest.fixture
def patient_locks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's statements wait for this test's lock instead of giving up (set before `daphne`)."""
    monkeypatch.setenv("DB_LOCK_TIMEOUT_MS", "120000")
    monkeypatch.setenv("DB_STATEMENT_TIMEOUT_MS", "120000")


@pytest.fixture
def project(transactional_db: None) -> Iterator[tuple[Tenant, Layer, str]]:
    """A committed workspace with a project of items and a signed-in viewer's session cookie."""
    tenant = make_tenant("cancel")
    project = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=project,
        items=[
            ItemInput(kind="memory", type="fact", content=f"Invoices of region {n} go out nightly.") for n in range(8)
        ],
    )
    user = get_user_model().objects.create_user(username="vic")
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    client = Client()
    client.force_login(user)
    assert background.wait_idle(120)
    yield tenant, project, client.cookies["sessionid"].value
    assert background.wait_idle(120)


def cancelled(base: str) -> dict[str, float]:
    with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {stage: float(value) for stage, value in CANCELLED.findall(text) if float(value)}


def waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else a transaction sees its first snapshot
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return bool(cursor.fetchone()[0])
