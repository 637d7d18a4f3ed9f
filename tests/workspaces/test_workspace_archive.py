"""Whole-workspace export and import through the API: the same contexts after a round trip, damaged
or foreign archives refused with nothing written, only empty workspaces restored into, no secrets."""

from __future__ import annotations

import asyncio
import hashlib
import zlib
from typing import Any

import orjson
import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from apps.conversations.models import Community
from apps.core.archive.parts import archive_parts
from apps.core.versions import content_version_peek
from apps.layers.models import Item, Layer
from apps.profiles.models import AgentProfile
from apps.summaries.models import Summary
from apps.workspaces.models import ApiKey, Scope
from apps.workspaces.services import api_key_create
from tests.support.tenants import Tenant, admin_client, make_tenant
from tests.workspaces.archive_data import UPSTREAM_KEY, Archived, build, members, rezip

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE_MS = 60_000  # every answer in full: a loaded machine must not make one partial
EXPORT, IMPORT = "/api/v1/workspace/export/", "/api/v1/workspace/import/"
# The same requests to both workspaces: layers are named by their external ids, which an import keeps.
REQUESTS: list[dict[str, Any]] = [
    {"layer_external_id": "sess-1", "query": "why is the orders table slow", "token_budget": 700},
    {"layer_external_id": "proj-portal", "query": "database backups and restore", "profile": "qa"},
    {"layer_external_id": "sess-1", "query": "login lockout", "format": "text", "token_budget": 400},
    {"layer_external_id": "team-billing", "query": "reporting replica lag", "template": "bullets"},
    {"layer_external_id": "sess-1", "query": "orders_archive missing", "group_id": "g1", "agent_type": "developer"},
    {"layer_external_id": "sess-2", "query": "is the replica up to date", "token_budget": 300},
]


@pytest.fixture
def source(tenant: Tenant) -> Archived:
    return build(tenant)


@pytest.fixture
def target(db: None) -> Tenant:
    return make_tenant("restored")


def export(client: APIClient, **query: str) -> bytes:
    response = client.get(EXPORT, query)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/zip"
    body = asyncio.run(_read(response.streaming_content))
    assert int(response["Content-Length"]) == len(body)
    return body


async def _read(chunks: Any) -> bytes:
    return b"".join([chunk async for chunk in chunks])  # the response streams from an async iterator


def restore(client: APIClient, archive: bytes) -> Any:
    return client.post(IMPORT, archive, content_type="application/zip")


def contexts(client: APIClient) -> list[str]:
    answers = []
    for body in REQUESTS:
        with override_settings(ASSEMBLY_TIMEOUT_MS=DEADLINE_MS):
            response = client.post("/api/v1/context/", body, format="json")
        assert response.status_code == 200, response.content
        assert not response.json()["partial"], response.json()["warnings"]
        answers.append(response.json()["context"])
    return answers


def holdings(t: Tenant) -> dict[str, Any]:
    """Everything an import could have written into the workspace."""
    t.workspace.refresh_from_db()
    root = Layer.objects.get(workspace=t.workspace, kind="company")
    return {
        "occupied": [part.name for part in archive_parts() if part.occupied(t.workspace.pk)],
        "layers": Layer.objects.filter(workspace=t.workspace).count(),
        "root": (root.name, root.external_id),
        "retention": t.workspace.records_retention_days,
        "version": content_version_peek(t.workspace.pk),
    }


def test_a_workspace_restored_into_a_fresh_one_answers_the_same_contexts(source: Archived, target: Tenant) -> None:
    before = contexts(source.tenant.client)
    assert all(before) and len(set(before)) == len(before)
    archive = export(source.admin, embeddings="1")
    manifest = orjson.loads(members(archive)["manifest.json"])
    assert manifest["format"] == "contextarch.workspace" and manifest["format_version"] == 1
    assert manifest["embeddings"] is True and manifest["workspace"]["slug"] == "acme"
    assert manifest["members"]["items.jsonl"]["rows"] == Item.objects.filter(workspace=source.tenant.workspace).count()
    for name in ("summaries.jsonl", "communities.jsonl"):  # ranked by their vectors like items: they travel too
        rows = [orjson.loads(line) for line in members(archive)[name].splitlines()]
        assert rows and all(len(row["embedding"]) == 384 and row["embedding_model"] for row in rows), name

    answer = restore(admin_client(target), archive)
    assert answer.status_code == 201, answer.content
    rows = answer.json()["rows"]
    assert rows["items"] == manifest["members"]["items.jsonl"]["rows"] and rows["summaries"] > 0
    assert rows["communities"] > 0 and rows["error_patterns"] == 1 and rows["profiles"] == 1
    assert rows["question_sets"] == 1 and rows["set_questions"] == 1 and rows["upstreams"] == 1

    assert contexts(target.client) == before
    # The qa profile's exclusion is the copy's item: its contexts leave it out (the id of an item deleted
    # before the export named nothing and is gone).
    qa = AgentProfile.objects.get(workspace=target.workspace, name="qa")
    (copy,) = Item.objects.filter(workspace=target.workspace, pk__in=qa.excluded_items)
    assert copy.external_id == "mem-1" and qa.excluded_items == [copy.pk]
    trace = target.client.post("/api/v1/context/preview/", REQUESTS[1], format="json").json()["trace"]
    assert [e["id"] for e in trace if e.get("reason") == "profile_excluded"] == [copy.pk]
    copied = Layer.objects.get(workspace=target.workspace, external_id="sess-1")
    assert copied.pk != source.layers["sess-1"]
    assert not Item.objects.filter(workspace=target.workspace, embedding__isnull=True).exists()
    replaced = Item.objects.get(workspace=target.workspace, content__startswith="Database backups are restored by hand")
    assert replaced.superseded_by is not None and replaced.superseded_by.workspace_id == target.workspace.pk
    merged = Item.objects.get(workspace=target.workspace, external_id="mem-0")
    assert (merged.seen_count, merged.merged_external_ids) == (2, ["mem-dup"])
    # What the import restored is what a second export of the copy holds (ids aside).
    again = members(export(admin_client(target), embeddings="1"))
    first = members(archive)
    for name in ("summaries.jsonl", "profiles.jsonl", "templates.jsonl", "redaction_allowlist.jsonl", "attempts.jsonl"):
        assert _without_ids(again[name]) == _without_ids(first[name]), name


def _without_ids(member: bytes) -> list[dict[str, Any]]:
    rows = [orjson.loads(line) for line in member.splitlines()]
    references = {"id", "layer", "pattern", "personalization_ref", "excluded_items"}
    return [{k: v for k, v in row.items() if k not in references} for row in rows]


def test_without_embeddings_the_copy_is_embedded_again_and_answers_the_same(
    source: Archived, target: Tenant, wait_background: Any
) -> None:
    before = contexts(source.tenant.client)
    archive = export(source.admin)
    assert b'"embedding"' not in members(archive)["items.jsonl"]
    assert restore(admin_client(target), archive).status_code == 201
    wait_background()
    assert not Item.objects.filter(workspace=target.workspace, embedding__isnull=True).exists()
    assert not Summary.objects.filter(workspace=target.workspace, embedding__isnull=True).exists()
    assert not Community.objects.filter(workspace=target.workspace, embedding__isnull=True).exists()
    assert contexts(target.client) == before


def _damaged(archive: bytes) -> dict[str, tuple[bytes, str]]:
    files = members(archive)
    manifest = orjson.loads(files["manifest.json"])

    def with_manifest(**changes: Any) -> dict[str, bytes]:
        return {**files, "manifest.json": orjson.dumps({**manifest, **changes})}

    items = files["items.jsonl"]
    flipped = items.replace(b"nightly", b"NIGHTLY", 1)
    without = {name: data for name, data in files.items() if name != "relationships.jsonl"}
    # A row naming a layer the archive lacks, in the last member, with its hash made to match: the
    # earlier members are written before it fails, and must be rolled back.
    bad_row = orjson.dumps({"default_parent": 999_999_999}) + b"\n"
    crafted = {**files, "proxy_settings.jsonl": bad_row}
    crafted_manifest = {**manifest, "members": {**manifest["members"]}}
    crafted_manifest["members"]["proxy_settings.jsonl"] = {
        "rows": 1,
        "bytes": len(bad_row),
        "sha256": hashlib.sha256(bad_row).hexdigest(),
    }
    crafted["manifest.json"] = orjson.dumps(crafted_manifest)
    return {
        "truncated": (archive[: len(archive) // 2], "archive_damaged"),
        "not a zip": (b"PK\x03\x04 this is no zip at all", "archive_damaged"),
        "empty body": (b"", "archive_damaged"),
        "altered member": (rezip({**files, "items.jsonl": flipped}), "archive_damaged"),
        "member cut short": (rezip({**files, "items.jsonl": items[: len(items) // 2]}), "archive_damaged"),
        "newer format version": (rezip(with_manifest(format_version=2)), "archive_format_unknown"),
        "foreign format": (rezip(with_manifest(format="contextarch.conversation")), "archive_format_unknown"),
        "no manifest": (rezip({k: v for k, v in files.items() if k != "manifest.json"}), "archive_format_unknown"),
        "missing member": (rezip(without), "archive_member_missing"),
        "unknown reference": (rezip(crafted), "archive_invalid"),
        "compressed garbage": (zlib.compress(archive), "archive_damaged"),
    }


def test_a_damaged_or_foreign_archive_is_refused_and_nothing_is_written(source: Archived, target: Tenant) -> None:
    archive = export(source.admin)
    admin = admin_client(target)
    empty = holdings(target)
    for damage, (body, code) in _damaged(archive).items():
        answer = restore(admin, body)
        assert answer.status_code == 400, (damage, answer.content)
        assert answer.json()["error"]["code"] == code, (damage, answer.json())
        assert holdings(target) == empty, damage
    assert restore(admin, archive).status_code == 201  # the undamaged archive goes in


def test_an_archive_is_restored_only_into_an_empty_workspace(
    source: Archived, target: Tenant, wait_background: Any
) -> None:
    archive = export(source.admin)
    note = {"layer": target.root.pk, "kind": "memory", "type": "fact", "content": "x"}
    assert target.client.post("/api/v1/items/", note, format="json").status_code == 201
    wait_background()  # its embedding and summaries count as changes too: done before the comparison
    admin = admin_client(target)
    full = holdings(target)
    answer = restore(admin, archive)
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "workspace_not_empty"
    assert answer.json()["error"]["details"]["parts"] == ["layers"]
    assert holdings(target) == full
    # The source itself is not empty either.
    assert restore(source.admin, archive).json()["error"]["code"] == "workspace_not_empty"


def test_a_key_exports_and_imports_its_own_workspace_only_and_needs_the_admin_scope(
    source: Archived, other_tenant: Tenant
) -> None:
    theirs = members(export(admin_client(other_tenant)))
    assert b"nightly" not in b"".join(theirs.values())
    assert orjson.loads(theirs["manifest.json"])["workspace"]["slug"] == "globex"
    for client in (source.tenant.client, other_tenant.client):  # read + write keys, no admin
        assert client.get(EXPORT).status_code == 403
        assert restore(client, b"").status_code == 403
    assert APIClient().get(EXPORT).status_code == 401
    bad = source.admin.get(EXPORT, {"embeddings": "perhaps"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_embeddings"
    wrong_type = source.admin.post(IMPORT, {"a": 1}, format="json")
    assert wrong_type.status_code == 415


def test_no_secret_is_in_an_archive(source: Archived) -> None:
    extra = api_key_create(workspace=source.tenant.workspace, name="ci", scopes=[Scope.READ])
    archive = export(source.admin, embeddings="1")
    content = b"".join(members(archive).values())
    secrets = [UPSTREAM_KEY, source.tenant.secret, extra.secret]
    secrets += [key.key_hash for key in ApiKey.objects.filter(workspace=source.tenant.workspace)]
    for secret in secrets:
        assert secret.encode() not in content
    assert b"key_sealed" not in content and b"key_hash" not in content
    assert b"AKIAIOSFODNN7EXAMPLE" in content  # the allow-list is there: the search would find a secret
