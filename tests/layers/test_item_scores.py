"""Item scores (helpfulness, importance, confidence) stay real numbers in 0..1, whatever writes them:
a NaN committed once used to break every later strategies list and context request of its workspace."""

from __future__ import annotations

import importlib

import pytest
from django.db import IntegrityError, connection, transaction

from apps.layers.models import Item
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

repair = importlib.import_module("apps.layers.migrations.0005_item_scores_in_range")


def strategy(tenant: Tenant, **fields: object) -> int:
    body = {"layer": tenant.root.pk, "title": "Retry with backoff", "content": "Retry with jittered backoff.", **fields}
    response = tenant.client.post("/api/v1/strategies/", body, format="json")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("helpfulness", "'NaN'"),
        ("importance", "'NaN'"),
        ("confidence", "'NaN'"),
        ("helpfulness", "1.5"),
        ("importance", "-0.1"),
    ],
)
def test_the_database_refuses_a_score_that_is_nan_or_out_of_range(tenant: Tenant, column: str, value: str) -> None:
    item_id = strategy(tenant)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE layers_item SET {column} = {value} WHERE id = %s", [item_id])


def test_the_strategy_nan_of_the_report_is_a_400_and_the_workspace_keeps_answering(tenant: Tenant) -> None:
    response = tenant.client.post(
        "/api/v1/strategies/", {"layer": tenant.root.pk, "content": "x", "helpfulness": "NaN"}, format="json"
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_helpfulness"
    strategy(tenant, helpfulness=0.9)
    assert tenant.client.get("/api/v1/strategies/").status_code == 200
    context = tenant.client.post("/api/v1/context/", {"layer": tenant.root.pk, "query": "retry"}, format="json")
    assert context.status_code == 200, context.json()


def test_the_migration_repairs_rows_poisoned_before_it_and_reads_work_again(tenant: Tenant) -> None:
    poisoned, clamped = strategy(tenant), strategy(tenant, title="Other")
    with connection.cursor() as cursor:  # as the table was before the constraints (rolled back after the test)
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # no deferred FK checks pending before ALTER TABLE
        for name in ("item_helpfulness_0_1", "item_importance_0_1", "item_confidence_0_1"):
            cursor.execute(f"ALTER TABLE layers_item DROP CONSTRAINT {name}")
        cursor.execute(
            "UPDATE layers_item SET helpfulness = 'NaN', importance = 'NaN', confidence = 'NaN' WHERE id = %s",
            [poisoned],
        )
        cursor.execute(
            "UPDATE layers_item SET helpfulness = 7, importance = -2, confidence = 3 WHERE id = %s", [clamped]
        )
        cursor.execute(repair.REPAIR_SQL)
    assert Item.objects.filter(pk=poisoned).values_list("helpfulness", "importance", "confidence").get() == (
        0.5,
        0.5,
        None,
    )
    assert Item.objects.filter(pk=clamped).values_list("helpfulness", "importance", "confidence").get() == (1, 0, 1)
    listed = tenant.client.get("/api/v1/strategies/")
    assert listed.status_code == 200 and [s["helpfulness"] for s in listed.json()["results"]] == [1.0, 0.5]
    context = tenant.client.post("/api/v1/context/", {"layer": tenant.root.pk, "query": "retry"}, format="json")
    assert context.status_code == 200, context.json()
