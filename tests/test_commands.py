"""The management commands: create_workspace prints a working key; seed_demo runs any number of times."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from apps.layers.models import Item, Layer
from apps.workspaces.models import Membership, Workspace
from apps.workspaces.selectors import api_key_get_active

pytestmark = pytest.mark.django_db


def run(*args: object, **options: object) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out, **options)
    return out.getvalue().strip().splitlines()


def test_it_prints_a_key_alone_on_the_last_line_that_authenticates() -> None:
    key = run("create_workspace", "initech", "--name", "Initech")[-1]
    assert key == key.strip() and " " not in key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = client.get("/api/v1/status/")
    assert response.status_code == 200
    workspace = Workspace.objects.get(slug="initech")
    assert workspace.name == "Initech"
    assert Layer.objects.filter(workspace=workspace, kind="company").count() == 1


def test_it_refuses_a_slug_that_exists_with_exit_code_1() -> None:
    run("create_workspace", "initech")
    with pytest.raises(CommandError, match="workspace_exists") as error:
        run("create_workspace", "initech")
    assert error.value.returncode == 1
    assert Workspace.objects.filter(slug="initech").count() == 1


def test_it_refuses_an_invalid_slug() -> None:
    with pytest.raises(CommandError, match="invalid_slug"):
        run("create_workspace", "not a slug!")
    assert not Workspace.objects.exists()


def test_seed_demo_creates_the_demo_once_and_prints_the_same_credentials(tmp_path: Path) -> None:
    credentials = tmp_path / "demo_credentials.json"
    first = run("seed_demo", credentials=credentials, url="http://127.0.0.1:9999/")
    items = Item.objects.filter(workspace__slug="demo").count()
    second = run("seed_demo", credentials=credentials)

    assert Workspace.objects.filter(slug="demo").count() == 1
    assert Item.objects.filter(workspace__slug="demo").count() == items >= 20
    assert not Item.objects.filter(workspace__slug="demo", embedding__isnull=True).exists()
    assert [line for line in first if "API key" in line] == [line for line in second if "API key" in line]
    assert any("http://127.0.0.1:9999/" in line for line in first)
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    # the items' state, whoever embedded them: never "(0 embedded now)" beside a log line saying 26 were
    assert any(f"{items} items (all embedded)" in line for line in first)
    assert any(f"{items} items (all embedded)" in line for line in second)
    stored = json.loads(credentials.read_text())
    printed = "\n".join(first + second)
    assert stored["password"] not in printed and stored["api_key"] not in printed  # secrets stay in the file
    assert str(credentials) in printed and stored["api_key"][:10] in printed


def test_seed_demo_builds_every_layer_kind_and_item_kind_with_an_admin_member(tmp_path: Path) -> None:
    credentials = tmp_path / "demo_credentials.json"
    run("seed_demo", credentials=credentials)
    stored = json.loads(credentials.read_text())
    workspace = Workspace.objects.get(slug="demo")

    layer_kinds = set(Layer.objects.filter(workspace=workspace).values_list("kind", flat=True))
    assert layer_kinds == {"company", "org", "team", "project", "multi_session", "session"}
    assert Layer.objects.filter(workspace=workspace, kind="session", external_id__isnull=False).exists()
    items = Item.objects.filter(workspace=workspace)
    assert set(items.values_list("kind", flat=True)) == {"message", "memory", "package", "spec", "document"}
    assert items.filter(kind="spec", pinned=True).exists()
    assert items.filter(kind="message", parent__isnull=False).exists()
    assert Membership.objects.get(workspace=workspace, user__username=stored["username"]).role == "admin"
    client = APIClient()
    assert client.login(username=stored["username"], password=stored["password"])
    demo_key = api_key_get_active(secret=stored["api_key"])
    assert demo_key is not None and demo_key.scopes == ["read", "write"]  # no key management


def test_seed_demo_issues_new_credentials_when_the_file_is_lost(tmp_path: Path) -> None:
    credentials = tmp_path / "demo_credentials.json"
    run("seed_demo", credentials=credentials)
    old_key = json.loads(credentials.read_text())["api_key"]
    credentials.unlink()
    run("seed_demo", credentials=credentials)
    key = json.loads(credentials.read_text())["api_key"]
    assert key != old_key and stat.S_IMODE(credentials.stat().st_mode) == 0o600
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/v1/status/").status_code == 200
    assert Workspace.objects.filter(slug="demo").count() == 1


def test_seed_demo_succeeds_with_the_embedding_provider_down_and_leaves_the_items_pending(tmp_path: Path) -> None:
    from django.test import override_settings

    from apps.core import embeddings
    from tests.support.processes import free_port

    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: every call is refused
    with override_settings(
        EMBEDDING_PROVIDER="openai", EMBEDDING_BASE_URL=closed, EMBEDDING_MODEL="down", EMBEDDING_TIMEOUT_SECONDS=1
    ):
        embeddings.get_provider.cache_clear()
        try:
            out = run("seed_demo", credentials=tmp_path / "demo_credentials.json")
        finally:
            embeddings.get_provider.cache_clear()
    items = Item.objects.filter(workspace__slug="demo")
    assert items.count() >= 20 and items.filter(embedding__isnull=True).count() == items.count()
    assert any(f"{items.count()} items wait for the embedding provider" in line for line in out), out
    assert any("API key" in line for line in out)
