"""Concurrent creates of one external id: the database's unique constraint decides, never a 500."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from rest_framework.test import APIClient

from apps.layers.models import Layer
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 6
ROUNDS = 8


Request = tuple[str, str, dict[str, object]]  # method, path, body


def _race(secret: str, requests: list[Request]) -> list[int]:
    """Send each request from its own thread (its own connection), all released at once; the statuses."""
    barrier = threading.Barrier(len(requests))
    statuses: list[int] = [0] * len(requests)

    def send(index: int) -> None:
        method, path, body = requests[index]
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        try:
            barrier.wait(timeout=30)
            response = getattr(client, method)(path, body, format="json")
            statuses[index] = response.status_code
            if response.status_code == 409:
                assert response.json()["error"]["code"] == "duplicate_external_id"
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(index,)) for index in range(len(requests))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return statuses


def test_it_creates_one_layer_and_answers_409_to_the_others_when_they_race() -> None:
    tenant = make_tenant("race")
    for round_ in range(ROUNDS):
        body = {"kind": "project", "name": f"p{round_}", "parent": tenant.root.pk, "external_id": f"proj-{round_}"}
        statuses = _race(tenant.secret, [("post", "/api/v1/layers/", body)] * THREADS)
        assert Counter(statuses) == {201: 1, 409: THREADS - 1}, statuses
        assert Layer.objects.filter(workspace=tenant.workspace, external_id=f"proj-{round_}").count() == 1


def test_renaming_layers_to_one_external_id_at_once_lets_one_win() -> None:
    tenant = make_tenant("race-patch")
    layers = [
        Layer.objects.create(workspace=tenant.workspace, kind="project", name=f"p{n}", parent=tenant.root)
        for n in range(THREADS)
    ]
    statuses = _race(
        tenant.secret, [("patch", f"/api/v1/layers/{layer.pk}/", {"external_id": "same"}) for layer in layers]
    )
    assert Counter(statuses) == {200: 1, 409: THREADS - 1}, statuses
    assert Layer.objects.filter(workspace=tenant.workspace, external_id="same").count() == 1
