"""`Idempotency-Key` on POSTs: a repeated key returns the first answer and writes nothing twice."""

from __future__ import annotations

from apps.layers.models import Item
from apps.workspaces.models import IdempotencyKey
from tests.conftest import Tenant


def _post(tenant: Tenant, content: str, key: str | None):  # type: ignore[no-untyped-def]
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    body = {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": content}
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
