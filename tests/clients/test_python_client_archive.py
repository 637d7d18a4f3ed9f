"""The Python client's workspace export/import and erasure against a live server (admin keys)."""

from __future__ import annotations

import asyncio
import io
import zipfile
from pathlib import Path

import pytest

from apps.layers.models import Item
from apps.workspaces.models import Scope
from apps.workspaces.services import api_key_create, workspace_create
from contextarch_client import (
    AsyncContextArchitect,
    Conflict,
    ContextArchitect,
    Erasure,
    InvalidRequest,
    PermissionDenied,
    WorkspaceImported,
)
from tests.clients.live_data import FACTS, Live

pytestmark = pytest.mark.server


def test_a_workspace_goes_through_the_client_into_another_and_a_full_one_refuses_it(live: Live, tmp_path: Path) -> None:
    source_key = api_key_create(workspace=live.a.workspace, name="admin", scopes=list(Scope.values)).secret
    target, _ = workspace_create(slug="acme-copy")
    target_key = api_key_create(workspace=target, name="admin", scopes=list(Scope.values)).secret
    archive = tmp_path / "acme.zip"

    with ContextArchitect(live.base, source_key) as source:
        written = source.workspace_export(archive)
        in_memory = io.BytesIO()
        assert source.workspace_export(in_memory, embeddings=True) == len(in_memory.getvalue())
    with ContextArchitect(live.base, target_key) as copy:
        restored = copy.workspace_import(archive)
        with pytest.raises(Conflict) as full:
            copy.workspace_import(in_memory.getvalue())  # the copy now holds the items
        with pytest.raises(InvalidRequest) as damaged:
            copy.workspace_import(b"PK\x03\x04 not a zip")
        items = {i.external_id: i.content for i in copy.iter_items()}

    assert written == archive.stat().st_size > 0
    assert "manifest.json" in zipfile.ZipFile(archive).namelist()
    assert isinstance(restored, WorkspaceImported)
    assert restored.source["slug"] == "acme" and restored.rows["items"] == len(FACTS)
    assert items == dict(FACTS)
    assert (full.value.status, full.value.code) == (409, "workspace_not_empty")
    assert damaged.value.status == 400 and damaged.value.code.startswith("archive_")


def test_an_export_without_the_admin_scope_raises_and_writes_no_file(live: Live, tmp_path: Path) -> None:
    with ContextArchitect(live.base, live.a.secret) as ca, pytest.raises(PermissionDenied):
        ca.workspace_export(tmp_path / "no.zip")
    assert not (tmp_path / "no.zip").exists()


def test_a_text_is_dry_run_then_erased_through_the_client_and_the_receipts_are_listed(live: Live) -> None:
    key = api_key_create(workspace=live.a.workspace, name="admin", scopes=list(Scope.values)).secret
    with ContextArchitect(live.base, key) as ca:
        with pytest.raises(InvalidRequest) as unreviewed:
            ca.erase(text="Android 12")
        dry = ca.erase(text="Android 12", dry_run=True)
        done = ca.erase(text="Android 12", dry_run_id=dry.id)
        listed = ca.erasures()
        again = ca.erasure(done.id)

    assert unreviewed.value.code == "erasure_dry_run_required"
    assert isinstance(dry, Erasure) and dry.dry_run and dry.places["items"].found == 1
    assert not done.dry_run and done.dry_run_of == dry.id and done.places["items"].removed == 1
    assert done.named.text is not None and "Android" not in done.named.text  # an HMAC, not the text
    assert not Item.objects.filter(workspace=live.a.workspace, external_id="android").exists()
    assert {e.id for e in listed.results} == {dry.id, done.id} and listed.count == 2
    assert again == done


def test_the_async_client_erases_items_by_id_and_exports(live: Live) -> None:
    key = api_key_create(workspace=live.a.workspace, name="admin", scopes=list(Scope.values)).secret
    backups = Item.objects.get(workspace=live.a.workspace, external_id="backups").pk

    async def work() -> tuple[Erasure, Erasure, bytes]:
        async with AsyncContextArchitect(live.base, key) as ca:
            done = await ca.erase(item_ids=[backups])
            out = io.BytesIO()
            await ca.workspace_export(out)
            return done, await ca.erasure(done.id), out.getvalue()

    done, again, archive = asyncio.run(work())

    assert done.places["items"].removed == 1 and again.id == done.id
    items = zipfile.ZipFile(io.BytesIO(archive)).read("items.jsonl").decode()
    assert "nightly at 02:00" not in items and "Tuesday" in items
