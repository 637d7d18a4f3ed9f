"""`manage.py workspace_export` / `workspace_import`: the API's archive through files, with progress."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db


def run(name: str, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(name, *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_exports_to_a_file_and_imports_it_into_an_empty_workspace(tenant: Tenant, tmp_path: Path) -> None:
    session = layer_create(workspace=tenant.workspace, kind="session", name="s", parent=tenant.root, external_id="s-1")
    texts = [f"Note {n}: the deploy of service {n} is on Tuesday." for n in range(30)]
    items_create(layer=session, items=[ItemInput(kind="memory", type="fact", content=t) for t in texts])
    path = tmp_path / "acme.zip"
    out, err = run("workspace_export", "acme", str(path))
    assert path.exists() and not path.with_name("acme.zip.partial").exists()
    assert "Exported 'acme'" in out and "items 30" in out
    assert "export: " in err and "(100%)" in err  # the plain progress lines (no terminal here)

    target = make_tenant("copy")
    out, err = run("workspace_import", "copy", str(path))
    assert "items 30" in out and "import: " in err and "(100%)" in err
    copied = Layer.objects.get(workspace=target.workspace, external_id="s-1")
    assert sorted(Item.objects.filter(layer=copied).values_list("content", flat=True)) == sorted(texts)

    with pytest.raises(CommandError, match="workspace_not_empty"):
        run("workspace_import", "copy", str(path))


def test_it_refuses_a_damaged_file_a_missing_file_and_an_unknown_workspace(tenant: Tenant, tmp_path: Path) -> None:
    path = tmp_path / "acme.zip"
    run("workspace_export", "acme", str(path))
    make_tenant("copy")
    cut = tmp_path / "cut.zip"
    cut.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(CommandError, match=r"archive_damaged\); nothing was written"):
        run("workspace_import", "copy", str(cut))
    with pytest.raises(CommandError, match="cannot read"):
        run("workspace_import", "copy", str(tmp_path / "none.zip"))
    with pytest.raises(CommandError, match="no workspace 'nowhere'"):
        run("workspace_export", "nowhere", str(path))
    with pytest.raises(CommandError, match="create_workspace"):
        run("workspace_import", "nowhere", str(path))
