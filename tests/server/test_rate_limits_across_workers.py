"""Without Redis, an API key's request rate holds across the server's worker processes: two workers
do not allow it twice over."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.db import connection

from tests.support.processes import database_url, free_port, http_json, served
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.server


@pytest.mark.django_db(transaction=True)
def test_two_workers_without_redis_share_a_keys_request_rate(tmp_path: Path) -> None:
    tenant = make_tenant("rated")
    auth = {"Authorization": f"Bearer {tenant.secret}"}
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    # A day's window: a burst of a few seconds never straddles two.
    env |= {"DATABASE_URL": database_url(connection.settings_dict), "RATE_LIMIT_API_KEY": "10/86400"}
    with served(env, free_port(), tmp_path / "serve.log", workers=2) as base:
        # A new connection each: the kernel spreads them over both workers.
        statuses = [http_json("GET", f"{base}/api/v1/status/", headers=auth)[0] for _ in range(30)]
    assert statuses.count(200) == 10 and statuses.count(429) == 20, statuses
