"""manage.py backup / restore: a backup restored into a fresh var/ answers the same context; a
damaged backup or one from a newer version is refused with nothing written."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from apps.core import background
from apps.layers.models import Item
from apps.workspaces.models import Workspace
from tests.support.processes import ROOT
from tests.support.tenants import Tenant, make_tenant

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = [
    "The nightly backup of the billing database runs at 02:00 UTC and is kept for 35 days.",
    "Alice owns the payments service; Bob is on call for it this week.",
    "Deployments to production need two approvals and happen on Tuesdays.",
]
DEADLINE_MS = 60_000  # the same answer in full both times: a loaded machine must not make either partial
ASK: dict[str, object] = {"query": "When does the billing backup run and how long is it kept?", "token_budget": 400}

# Asks the restored database for the same context, through the API, with the same key.
ASK_SCRIPT = """
import json, os
from django.test import Client
response = Client().post("/api/v1/context/", json.loads(os.environ["ASK"]), content_type="application/json",
                         HTTP_AUTHORIZATION="Bearer " + os.environ["SECRET"], HTTP_HOST="localhost")
body = response.json()
answer = {"status": response.status_code, "context": body.get("context"), "partial": body.get("partial")}
print("ANSWER", json.dumps(answer))
"""


def seeded() -> tuple[Tenant, str]:
    tenant = make_tenant("acme")
    ASK["layer"] = tenant.root.pk  # ids are kept by a restore
    for fact in FACTS:
        body = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": fact}
        assert tenant.client.post("/api/v1/items/", body, format="json").status_code == 201
    assert background.wait_idle(60)
    assert not Item.objects.filter(embedding__isnull=True).exists()
    with override_settings(ASSEMBLY_TIMEOUT_MS=DEADLINE_MS):
        response = tenant.client.post("/api/v1/context/", ASK, format="json")
    assert response.status_code == 200 and not response.json()["partial"]
    return tenant, response.json()["context"]


def fresh_var(tmp_path: Path) -> dict[str, str]:
    """The environment of a process that starts its own embedded PostgreSQL in an empty var/."""
    env = {
        **os.environ,
        "CONTEXTARCH_VAR_DIR": str(tmp_path / "var"),
        "REDIS_URL": "",
        "OMP_NUM_THREADS": "1",
        "ASSEMBLY_TIMEOUT_MS": str(DEADLINE_MS),  # a new process loads the embedding model first
    }
    env.pop("DATABASE_URL", None)
    return env


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_backup_restored_into_a_fresh_var_answers_the_same_context(tmp_path: Path) -> None:
    tenant, context = seeded()
    out = io.StringIO()
    call_command("backup", str(tmp_path / "backup.tar"), stdout=out)
    assert "layers.Item 3" in out.getvalue()
    manifest = json.loads(tarfile.open(tmp_path / "backup.tar").extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert manifest["counts"]["layers.Item"] == 3 and len(manifest["dump_sha256"]) == 64
    assert tenant.secret not in (tmp_path / "backup.tar").read_text(errors="ignore")  # keys are stored hashed

    env = fresh_var(tmp_path)
    restored = manage(env, "restore", str(tmp_path / "backup.tar"))
    assert restored.returncode == 0, restored.stderr
    assert "layers.Item 3" in restored.stdout
    asked = manage({**env, "ASK": json.dumps(ASK), "SECRET": tenant.secret}, "shell", "-c", ASK_SCRIPT)
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout.split("ANSWER ", 1)[1])
    assert answer == {"status": 200, "context": context, "partial": False}

    again = manage(env, "restore", str(tmp_path / "backup.tar"))  # the fresh var/ holds a workspace now
    assert again.returncode != 0 and "--replace" in again.stderr


def test_a_damaged_backup_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    seeded()
    good = tmp_path / "backup.tar"
    call_command("backup", str(good), stdout=io.StringIO())
    damaged = tmp_path / "damaged.tar"
    with tarfile.open(good) as source, tarfile.open(damaged, "w") as target:
        for member in source.getmembers():
            data = bytearray(source.extractfile(member).read())  # type: ignore[union-attr]
            if member.name == "database.dump":
                data[len(data) // 2] ^= 0xFF
            target.addfile(member, io.BytesIO(bytes(data)))
    with pytest.raises(CommandError, match="SHA-256 does not match"):
        call_command("restore", str(damaged), "--replace", stdout=io.StringIO())
    assert Workspace.objects.filter(slug="acme").exists() and Item.objects.count() == 3  # untouched

    (tmp_path / "junk.tar").write_bytes(b"not a tar at all")
    with pytest.raises(CommandError, match="not a backup of this service"):
        call_command("restore", str(tmp_path / "junk.tar"), stdout=io.StringIO())


def test_a_backup_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    seeded()
    good, newer = tmp_path / "backup.tar", tmp_path / "newer.tar"
    call_command("backup", str(good), stdout=io.StringIO())
    with tarfile.open(good) as source, tarfile.open(newer, "w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read()  # type: ignore[union-attr]
            if member.name == "manifest.json":
                manifest = json.loads(data)
                manifest["migrations"]["layers"] = "9999_from_the_future"
                data = json.dumps(manifest).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    with pytest.raises(CommandError, match=r"newer version.*layers.9999_from_the_future"):
        call_command("restore", str(newer), "--replace", stdout=io.StringIO())
    assert Item.objects.count() == 3
