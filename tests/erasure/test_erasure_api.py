"""Erasure by item ids, external id prefix and user; receipts; every bad request answered with its code."""

from __future__ import annotations

import json

import pytest

from apps.assembly.models import AssemblyRecord
from apps.assembly.services import records_flush
from apps.erasure.models import ErasureRecord
from apps.layers.models import Item, Layer
from tests.erasure.text_scan import hits
from tests.support.tenants import Tenant, admin_client, make_tenant

pytestmark = pytest.mark.django_db


def post(client, path: str, body: dict[str, object]) -> dict:  # type: ignore[no-untyped-def, type-arg]
    response = client.post(path, body, format="json")
    assert response.status_code in (200, 201), response.content
    return response.json()


@pytest.fixture
def alice(tenant: Tenant) -> dict[str, object]:
    c = tenant.client
    project = post(c, "/api/v1/layers/", {"kind": "project", "name": "Crm", "parent": tenant.root.pk})["id"]
    # The proxy's session of the OpenAI `user` "alice" (apps/proxy/conversation.session_external_id).
    proxied = post(
        c,
        "/api/v1/layers/",
        {"kind": "session", "name": "proxy-user:alice", "parent": project, "external_id": "proxy-user:alice"},
    )["id"]
    post(
        c,
        "/api/v1/items/bulk/",
        {"layer": proxied, "items": [{"kind": "message", "role": "user", "content": "I prefer window seats."}]},
    )
    ids = post(
        c,
        "/api/v1/items/bulk/",
        {
            "layer": project,
            "items": [
                {"kind": "memory", "type": "fact", "content": "Alice's phone ends in 4471.", "external_id": "alice-1"},
                {"kind": "memory", "type": "fact", "content": "Alice's dog is called Pico.", "external_id": "alice-2"},
                {"kind": "memory", "type": "fact", "content": "Her badge is B-77.", "metadata": {"user": "alice"}},
                {"kind": "memory", "type": "fact", "content": "The office opens at 8.", "external_id": "bob-1"},
                {"kind": "memory", "type": "fact", "content": "Seats are booked a week ahead."},
            ],
        },
    )["ids"]
    answer = post(c, "/api/v1/context/", {"layer": project, "query": "Alice's phone", "timeout_ms": 0})
    post(c, "/api/v1/context/", {"layer": proxied, "query": "Which seats?", "timeout_ms": 0})
    records_flush()
    return {"project": project, "proxied": proxied, "ids": ids, "trace_id": answer["trace_id"], "answer": answer}


def test_a_user_and_a_prefix_are_erased_without_a_dry_run_and_the_record_keeps_its_figures(
    tenant: Tenant,
    alice: dict,  # type: ignore[type-arg]
) -> None:
    admin = admin_client(tenant)
    ids: list[int] = alice["ids"]  # type: ignore[assignment]
    receipt = post(admin, "/api/v1/erasure/", {"external_id_prefix": "alice-", "user": "alice"})
    assert receipt["dry_run"] is False and receipt["state"] == "done"
    assert receipt["places"]["items"]["removed"] == 4  # alice-1, alice-2, the tagged one, the proxied message
    assert receipt["places"]["layers"]["removed"] == 1
    assert receipt["named"]["item_ids"] == []
    assert receipt["named"]["user"] and receipt["named"]["external_id_prefix"]
    assert "alice" not in json.dumps(receipt).lower()

    assert set(
        Item.objects.filter(workspace=tenant.workspace, layer_id=alice["project"]).values_list("pk", flat=True)
    ) == {
        ids[3],
        ids[4],
    }
    assert not Layer.objects.filter(pk=alice["proxied"]).exists()
    record = AssemblyRecord.objects.get(trace_id=alice["trace_id"])
    assert record.context == "[erased]"
    assert record.tokens_used == alice["answer"]["total_tokens"]
    assert {e["external_id"] for e in record.trace if e["id"] in ids[:2] and e["source"] == "item"} <= {"[erased]"}
    # What identified her is in no column of any table: the erased contents, external ids, her session's name.
    for erased in ("4471", "Pico", "B-77", "window seats", "alice-1", "alice-2", "proxy-user:alice"):
        assert hits(erased) == [], erased
    assert AssemblyRecord.objects.filter(session="[erased]").count() == 1
    context = post(tenant.client, "/api/v1/context/", {"layer": alice["project"], "query": "Alice phone dog badge"})
    assert "4471" not in context["context"] and "Pico" not in context["context"] and "B-77" not in context["context"]

    listed = admin.get("/api/v1/erasure/").json()
    assert [r["id"] for r in listed["results"]] == [receipt["id"]]
    assert admin.get(f"/api/v1/erasure/{receipt['id']}/").json() == receipt


def test_items_by_id_are_erased_and_a_dry_run_counts_without_changing_anything(
    tenant: Tenant,
    alice: dict,  # type: ignore[type-arg]
) -> None:
    admin = admin_client(tenant)
    ids: list[int] = alice["ids"]  # type: ignore[assignment]
    dry = post(admin, "/api/v1/erasure/", {"item_ids": [ids[3]], "dry_run": True})
    assert dry["places"]["items"] == {"found": 1, "removed": 0, "rewritten": 0, "regenerated": 0, "cleared": 0}
    assert Item.objects.filter(pk=ids[3]).exists()
    done = post(admin, "/api/v1/erasure/", {"item_ids": [ids[3], 999_999]})
    assert done["places"]["items"]["removed"] == 1 and done["named"]["item_ids"] == [ids[3], 999_999]
    assert not Item.objects.filter(pk=ids[3]).exists()


def test_another_workspace_is_neither_searched_nor_touched(tenant: Tenant, alice: dict) -> None:  # type: ignore[type-arg]
    other = make_tenant("globex")
    ids: list[int] = alice["ids"]  # type: ignore[assignment]
    done = post(admin_client(other), "/api/v1/erasure/", {"item_ids": ids, "external_id_prefix": "alice-"})
    assert done["places"]["items"]["found"] == 0
    assert Item.objects.filter(pk__in=ids).count() == 5
    dry = post(admin_client(tenant), "/api/v1/erasure/", {"text": "window seats", "dry_run": True})
    refused = admin_client(other).post(
        "/api/v1/erasure/", {"text": "window seats", "dry_run_id": dry["id"]}, format="json"
    )
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "erasure_dry_run_not_found"
    assert admin_client(other).get(f"/api/v1/erasure/{dry['id']}/").status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({}, 400, "erasure_target_required"),
        ({"dry_run": True}, 400, "erasure_target_required"),
        ({"text": "ab", "dry_run": True}, 400, "invalid_text"),
        ({"item_ids": [0]}, 400, "invalid_item_ids"),
        ({"item_ids": "1"}, 400, "invalid_item_ids"),
        ({"item_ids": [2**63]}, 400, "invalid_item_ids"),
        ({"text": "window seats", "dry_run_id": 2**63}, 400, "invalid_dry_run_id"),
        ({"user": ""}, 400, "invalid_user"),
        ({"text": "window seats"}, 400, "erasure_dry_run_required"),
        ({"text": "window seats", "dry_run_id": 999_999}, 404, "erasure_dry_run_not_found"),
        ({"text": "window seats", "dry_run": True, "dry_run_id": 1}, 400, "invalid_dry_run_id"),
        ({"item_ids": [1], "surprise": 1}, 400, "unknown_fields"),
    ],
)
def test_a_bad_request_is_refused_with_its_code(tenant: Tenant, body: dict, status: int, code: str) -> None:  # type: ignore[type-arg]
    response = admin_client(tenant).post("/api/v1/erasure/", body, format="json")
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert not ErasureRecord.objects.exists()


def test_only_an_admin_key_erases_or_reads_receipts(tenant: Tenant) -> None:
    response = tenant.client.post("/api/v1/erasure/", {"item_ids": [1]}, format="json")
    assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
    assert tenant.client.get("/api/v1/erasure/").status_code == 403
    assert admin_client(tenant).get("/api/v1/erasure/1/").json()["error"]["code"] == "erasure_not_found"
    assert admin_client(tenant).get(f"/api/v1/erasure/{2**70}/").status_code == 404
