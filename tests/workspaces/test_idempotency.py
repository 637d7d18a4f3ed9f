"""`Idempotency-Key` on POSTs: a repeated key returns the first answer and writes nothing twice."""

from __future__ import annotations

from rest_framework.test import APIClient

from apps.layers.models import Item
from apps.workspaces.models import ApiKey, IdempotencyKey
from apps.workspaces.services import api_key_create
from tests.support.tenants import Tenant, admin_client


def _post(tenant: Tenant, content: str, key: str | None):  # type: ignore[no-untyped-def]
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    # Kept apart when it repeats a stored item: these tests are about the Idempotency-Key, not about
    # merging repeats (a request without a key, or under another key, runs again: it writes anew).
    body = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": content, "on_duplicate": "keep"}
    return tenant.client.post("/api/v1/items/", body, format="json", **headers)


def test_it_returns_the_first_answer_for_a_repeated_key_and_writes_once(tenant: Tenant) -> None:
    first = _post(tenant, "Backups are kept for 35 days.", "retry-7f3a")
    again = _post(tenant, "Backups are kept for 35 days.", "retry-7f3a")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert Item.objects.filter(workspace=tenant.workspace).count() == 1


def test_the_same_key_with_another_body_is_refused(tenant: Tenant) -> None:
    assert _post(tenant, "One fact.", "k-1").status_code == 201
    reused = _post(tenant, "Another fact.", "k-1")
    assert reused.status_code == 422 and reused.json()["error"]["code"] == "idempotency_key_reused"
    assert Item.objects.filter(workspace=tenant.workspace).count() == 1


def test_keys_are_per_workspace_and_requests_without_one_are_not_stored(tenant: Tenant, other_tenant: Tenant) -> None:
    assert _post(tenant, "Shared wording.", "same").status_code == 201
    other = _post(other_tenant, "Shared wording.", "same")
    assert other.status_code == 201 and "Idempotent-Replayed" not in other
    assert _post(tenant, "No key.", None).status_code == 201
    assert _post(tenant, "No key.", None).status_code == 201
    assert Item.objects.filter(workspace=tenant.workspace).count() == 3
    assert IdempotencyKey.objects.count() == 2


def test_a_refused_request_is_replayed_as_refused_and_a_bad_key_is_a_400(tenant: Tenant) -> None:
    first = _post(tenant, "", "empty")
    assert first.status_code == 400
    assert _post(tenant, "", "empty").json() == first.json()
    bad = _post(tenant, "x", "é" * 3)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_idempotency_key"


def _keyed(tenant: Tenant, scopes: list[str]) -> APIClient:
    created = api_key_create(workspace=tenant.workspace, name="+".join(scopes), scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    return client


KEY_BODY = {"name": "deploy", "scopes": ["read", "write", "admin"]}


def test_a_read_only_key_cannot_replay_an_admin_keys_creation(tenant: Tenant) -> None:
    created = admin_client(tenant).post("/api/v1/keys/", KEY_BODY, format="json", HTTP_IDEMPOTENCY_KEY="deploy-1")
    assert created.status_code == 201
    secret = created.json()["key"]
    replay = _keyed(tenant, ["read"]).post("/api/v1/keys/", KEY_BODY, format="json", HTTP_IDEMPOTENCY_KEY="deploy-1")
    assert replay.status_code == 403 and replay.json()["error"]["code"] == "insufficient_scope"
    assert secret not in replay.content.decode()


def test_a_repeated_key_creation_never_shows_the_secret_again(tenant: Tenant) -> None:
    admin = admin_client(tenant)
    created = admin.post("/api/v1/keys/", KEY_BODY, format="json", HTTP_IDEMPOTENCY_KEY="deploy-2")
    secret, key_id = created.json()["key"], created.json()["id"]
    again = admin.post("/api/v1/keys/", KEY_BODY, format="json", HTTP_IDEMPOTENCY_KEY="deploy-2")
    assert again.status_code == 409 and again["Idempotent-Replayed"] == "true"
    error = again.json()["error"]
    assert error["code"] == "api_key_secret_not_replayed" and error["details"]["id"] == key_id
    assert secret not in again.content.decode()
    assert ApiKey.objects.filter(workspace=tenant.workspace, name="deploy").count() == 1


def test_stored_answers_hold_no_secret_and_no_content_in_plaintext(tenant: Tenant) -> None:
    created = admin_client(tenant).post("/api/v1/keys/", KEY_BODY, format="json", HTTP_IDEMPOTENCY_KEY="deploy-3")
    secret = created.json()["key"]
    assert _post(tenant, "The staging password rotates on Fridays.", "item-3").status_code == 201
    stored = b"".join(bytes(row.body) for row in IdempotencyKey.objects.all())
    assert stored and secret.encode() not in stored and b"staging password" not in stored


def test_another_key_of_the_workspace_with_the_same_idempotency_key_writes_anew(tenant: Tenant) -> None:
    assert _post(tenant, "One fact.", "shared").status_code == 201
    writer = _keyed(tenant, ["read", "write"])
    body = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "One fact.", "on_duplicate": "keep"}
    other = writer.post("/api/v1/items/", body, format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert other.status_code == 201 and "Idempotent-Replayed" not in other
    assert Item.objects.filter(workspace=tenant.workspace).count() == 2
