"""A real daphne process serves the API over HTTP, against the test database."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from apps.core import background, tokenizer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.conftest import Tenant, make_tenant
from tests.processes import database_url, free_port

pytestmark = pytest.mark.server

FACTS = [
    ("backups", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("deploys", "Builds are promoted from staging to production every Tuesday."),
    ("android", "The mobile app crashes on Android 12 when the camera permission is denied."),
]


def http(method: str, url: str, body: object = None, key: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture
def daphne(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """The base URL of a daphne subprocess that shares this test's database; stopped afterwards."""
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "OMP_NUM_THREADS": "1"}
    log = tmp_path / "daphne.log"
    command = [str(Path(sys.executable).parent / "daphne"), "--bind", "127.0.0.1", "--port", str(port)]
    with log.open("w") as output:
        process = subprocess.Popen(
            [*command, "contextarch.asgi:application"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, f"daphne exited: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"daphne did not answer: {log.read_text()[-2000:]}"
            try:
                urllib.request.urlopen(f"{base}/metrics", timeout=2).close()
                break
            except OSError:
                time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def loaded_tenant(transactional_db: None) -> Iterator[Tenant]:
    """A tenant with a session of facts, committed and embedded, so another process can see them."""
    tenant = make_tenant("served")
    session = layer_create(workspace=tenant.workspace, kind="session", name="s1", parent=tenant.root)
    items_create(
        layer=session, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    assert background.wait_idle(120)
    yield tenant
    assert background.wait_idle(120)


def test_it_assembles_context_over_real_http_within_the_budget(daphne: str, loaded_tenant: Tenant) -> None:
    request = {"layer": loaded_tenant.root.pk, "query": "How long are database backups kept?", "token_budget": 40}
    status, body = http("POST", f"{daphne}/api/v1/context/", request, key=loaded_tenant.secret)

    assert status == 200, body
    result = json.loads(body)
    assert result["chunks"], result
    assert result["chunks"][0]["external_id"] == "backups"
    assert result["total_tokens"] <= result["token_budget"] == 40
    encoding = tokenizer.encoding_for_model(settings.DEFAULT_MODEL).encoding
    assert tokenizer.count_tokens(result["context"], encoding) == result["total_tokens"]


def test_it_rejects_a_request_without_a_key_over_http(daphne: str, loaded_tenant: Tenant) -> None:
    status, body = http("POST", f"{daphne}/api/v1/context/", {"layer": loaded_tenant.root.pk, "query": "backups"})
    assert status == 401
    assert json.loads(body)["error"]["code"] == "not_authenticated"


def test_it_serves_metrics_that_count_the_served_requests(daphne: str, loaded_tenant: Tenant) -> None:
    http("GET", f"{daphne}/api/v1/status/", key=loaded_tenant.secret)
    status, body = http("GET", f"{daphne}/metrics")
    assert status == 200
    assert "# TYPE" in body
    assert 'route="api/v1/status/",status="200"' in body
