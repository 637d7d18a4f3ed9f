"""API keys come from each process's memory after their first use, and a revoked or deleted key is
refused at once, in this process and in every other."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.workspaces.models import ApiKey
from tests.support.processes import database_url
from tests.support.tenants import Tenant, admin_client, make_tenant


def _key_queries(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if 'FROM "workspaces_apikey"' in q["sql"]]


@pytest.mark.django_db
def test_it_reads_a_key_from_the_database_once_then_from_memory(tenant: Tenant) -> None:
    with CaptureQueriesContext(connection) as first:
        assert tenant.client.get("/api/v1/layers/").status_code == 200
    with CaptureQueriesContext(connection) as second:
        assert tenant.client.get("/api/v1/layers/").status_code == 200
    assert len(_key_queries(first)) == 1
    assert _key_queries(second) == []


@pytest.mark.django_db
def test_a_revoked_key_is_refused_on_its_next_request(tenant: Tenant) -> None:
    assert tenant.client.get("/api/v1/layers/").status_code == 200  # now cached
    key = tenant.workspace.api_keys.get()
    assert admin_client(tenant).post(f"/api/v1/keys/{key.pk}/revoke/").status_code == 200
    refused = tenant.client.get("/api/v1/layers/")
    assert refused.status_code == 401


@pytest.mark.django_db
def test_a_deleted_key_is_refused_on_its_next_request(tenant: Tenant) -> None:
    assert tenant.client.get("/api/v1/layers/").status_code == 200
    tenant.workspace.api_keys.all().delete()
    assert tenant.client.get("/api/v1/layers/").status_code == 401


REVOKE = """
import django, sys
django.setup()
from apps.workspaces.models import ApiKey
from apps.workspaces.services import api_key_revoke
api_key_revoke(api_key=ApiKey.objects.get(pk=int(sys.argv[1])))
"""


@pytest.mark.django_db(transaction=True)
def test_a_key_revoked_by_another_process_is_refused_here_at_once() -> None:
    tenant = make_tenant("acme")
    assert tenant.client.get("/api/v1/layers/").status_code == 200  # cached in this process
    key = ApiKey.objects.get(workspace=tenant.workspace)
    env = dict(os.environ, DATABASE_URL=database_url(connection.settings_dict))
    env |= {"DJANGO_SETTINGS_MODULE": "contextarch.settings", "CONTEXTARCH_VAR_DIR": str(settings.VAR_DIR)}
    subprocess.run([sys.executable, "-c", REVOKE, str(key.pk)], cwd=settings.BASE_DIR, env=env, check=True, timeout=120)
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert tenant.client.get("/api/v1/layers/").status_code == 401
