"""The summaries API: read, force, configure; scoped to the key's workspace, errors with stable codes."""

from __future__ import annotations

from apps.summaries.models import LayerConfig
from tests.summaries.helpers import TEAM_FACTS, facts, tree
from tests.support.tenants import Tenant


def test_summarize_then_read_the_three_depths(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    assert tenant.client.get(f"/api/v1/layers/{t.team.pk}/summaries/").json()["summaries"] == []
    forced = tenant.client.post(f"/api/v1/layers/{t.team.pk}/summarize/", format="json")
    assert forced.status_code == 200
    body = forced.json()
    assert body["status"] == "generated" and body["provider"] == "extractive" and body["reason"] == "forced"
    assert [s["depth"] for s in body["summaries"]] == ["sentence", "paragraph", "detailed"]
    again = tenant.client.post(f"/api/v1/layers/{t.team.pk}/summarize/", format="json").json()
    assert again["status"] == "generated"  # forced: even with an unchanged source
    shown = tenant.client.get(f"/api/v1/layers/{t.team.pk}/summaries/").json()
    assert shown["layer"] == t.team.pk and shown["warnings"] == []
    assert [
        (s["depth"], s["token_count"] <= {"sentence": 50, "paragraph": 200, "detailed": 500}[s["depth"]])
        for s in shown["summaries"]
    ] == [
        ("sentence", True),
        ("paragraph", True),
        ("detailed", True),
    ]


def test_the_config_reads_defaults_per_kind_and_validates_changes(tenant: Tenant) -> None:
    t = tree(tenant)
    got = tenant.client.get(f"/api/v1/layers/{t.session.pk}/config/").json()
    assert (got["update_interval_seconds"], got["update_on_changes"], got["personalization"]) == (
        300,
        1,
        "highly_personalized",
    )
    company = tenant.client.get(f"/api/v1/layers/{t.company.pk}/config/").json()
    assert (company["update_interval_seconds"], company["update_on_changes"], company["personalized"]) == (
        3600,
        10,
        False,
    )
    put = tenant.client.put(
        f"/api/v1/layers/{t.project.pk}/config/",
        {"update_interval_seconds": 600, "update_on_changes": 7, "skip_if_unchanged": False},
        format="json",
    )
    assert put.status_code == 200 and put.json()["update_on_changes"] == 7
    stored = LayerConfig.objects.get(layer=t.project)
    assert (stored.update_interval_seconds, stored.update_on_changes, stored.skip_if_unchanged) == (600, 7, False)
    for body, code in (
        ({"update_interval_seconds": 5}, "invalid_update_interval_seconds"),
        ({"update_on_changes": 0}, "invalid_update_on_changes"),
        ({"personalization": "very"}, "invalid_personalization"),
        ({"skip_if_unchanged": "maybe"}, "invalid_skip_if_unchanged"),
        ({"update_intervall_seconds": 600}, "invalid_fields"),  # a typo must not answer 200 and change nothing
        (["update_on_changes"], "invalid_body"),
    ):
        bad = tenant.client.put(f"/api/v1/layers/{t.project.pk}/config/", body, format="json")
        assert bad.status_code == 400 and bad.json()["error"]["code"] == code, (body, bad.json())


def test_an_invalid_stored_config_falls_back_to_the_kind_default_on_load(tenant: Tenant) -> None:
    t = tree(tenant)
    LayerConfig.objects.filter(layer=t.team).update(update_interval_seconds=1, update_on_changes=4)
    got = tenant.client.get(f"/api/v1/layers/{t.team.pk}/config/").json()
    assert (got["update_interval_seconds"], got["update_on_changes"]) == (3600, 4)


def test_other_workspaces_layers_are_404_and_keys_are_required(tenant: Tenant, other_tenant: Tenant, anon) -> None:  # type: ignore[no-untyped-def]
    theirs = other_tenant.root.pk
    for method, path in (
        ("get", f"/api/v1/layers/{theirs}/summaries/"),
        ("post", f"/api/v1/layers/{theirs}/summarize/"),
        ("get", f"/api/v1/layers/{theirs}/config/"),
        ("put", f"/api/v1/layers/{theirs}/config/"),
    ):
        response = getattr(tenant.client, method)(path, {}, format="json")
        assert response.status_code == 404 and response.json()["error"]["code"] == "layer_not_found"
        assert getattr(anon, method)(path, {}, format="json").status_code == 401
