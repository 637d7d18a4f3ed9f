"""Personalized summaries: a reader's recent concerns lead their summary; company and org stay generic."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from apps.layers.services import ItemInput, items_create
from apps.summaries.models import LayerConfig, Summary
from apps.summaries.services import layer_summarize
from apps.workspaces.models import Membership
from tests.summaries.helpers import COMPANY_FACTS, TEAM_FACTS, Tree, facts, tree
from tests.support.tenants import Tenant

CONCERN = "I worry that card numbers might leak into the logs of the tokenizer service."


def _member(tenant: Tenant, username: str) -> int:
    user = get_user_model().objects.create_user(username=username, password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user)
    return user.pk


def _talk(t: Tree, username: str, texts: list[str]) -> None:
    items_create(
        layer=t.session,
        items=[ItemInput(kind="message", role="user", content=x, metadata={"user": username}) for x in texts],
    )


def test_a_team_summary_for_a_reader_leads_with_their_concerns_and_is_tagged(tenant: Tenant) -> None:
    t = tree(tenant)
    alice = _member(tenant, "alice")
    facts(t.team, TEAM_FACTS * 3)
    _talk(t, "alice", [CONCERN, "Can we prove the logs never hold card numbers?"])
    result = layer_summarize(layer=t.team)
    assert result.readers == ["alice"]
    generic = {s.depth: s for s in Summary.objects.filter(layer=t.team, personalized_for__isnull=True)}
    personal = {s.depth: s for s in Summary.objects.filter(layer=t.team, personalized_for_id=alice)}
    assert set(personal) == {"sentence", "paragraph", "detailed"}
    assert personal["paragraph"].text.startswith("For alice:") and "card numbers" in personal["paragraph"].text
    assert "card numbers" in personal["sentence"].text.lower()  # the focus chose the sentence about her concern
    assert personal["sentence"].text != generic["sentence"].text
    ref = personal["detailed"].personalization_ref
    assert ref["user"] == "alice" and len(ref["items"]) == 2 and "card numbers" in ref["concerns"]
    assert generic["detailed"].personalization_ref == {}
    # unchanged concerns and source: the next trigger skips both
    assert layer_summarize(layer=t.team, trigger="interval").status == "skipped"
    # a new concern regenerates only what changed
    _talk(t, "alice", ["What about Adyen fallback for EU cards during a Stripe outage?"])
    again = layer_summarize(layer=t.team, trigger="interval")
    assert again.status == "generated" and again.readers == ["alice"]


def test_company_and_org_summaries_stay_generic(tenant: Tenant) -> None:
    t = tree(tenant)
    _member(tenant, "bob")
    facts(t.company, COMPANY_FACTS)
    _talk(t, "bob", [CONCERN])
    layer_summarize(layer=t.company)
    assert not Summary.objects.filter(layer=t.company, personalized_for__isnull=False).exists()
    # even a stored configuration asking otherwise (written around the service) is not obeyed
    LayerConfig.objects.filter(layer=t.company).update(personalization="personalized")
    assert layer_summarize(layer=t.company, force=True).readers == []
    response = tenant.client.put(
        f"/api/v1/layers/{t.org.pk}/config/", {"personalization": "personalized"}, format="json"
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_personalization"


def test_content_of_non_members_or_other_users_does_not_personalize(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    _talk(t, "mallory", [CONCERN])  # not a member of the workspace
    assert layer_summarize(layer=t.team).readers == []


def test_the_summaries_api_and_the_context_api_serve_the_reader_their_summary(tenant: Tenant) -> None:
    t = tree(tenant)
    _member(tenant, "alice")
    facts(t.team, TEAM_FACTS * 3)
    _talk(t, "alice", [CONCERN])
    layer_summarize(layer=t.team)
    mine = tenant.client.get(f"/api/v1/layers/{t.team.pk}/summaries/?user=alice").json()["summaries"]
    generic = tenant.client.get(f"/api/v1/layers/{t.team.pk}/summaries/").json()["summaries"]
    assert all(s["personalized"] for s in mine) and not any(s["personalized"] for s in generic)
    assert mine[1]["personalization_ref"]["user"] == "alice"
    missing = tenant.client.get(f"/api/v1/layers/{t.team.pk}/summaries/?user=nobody")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "user_not_found"
    body = {"layer": t.project.pk, "query": "payments retry", "token_budget": 4000, "format": "text", "kinds": []}
    as_alice = tenant.client.post("/api/v1/context/", {**body, "user": "alice"}, format="json").json()
    anonymous = tenant.client.post("/api/v1/context/", body, format="json").json()
    team_chunk = [c for c in as_alice["chunks"] if c["source"] == "summary" and c["layer"] == t.team.pk]
    assert team_chunk and "For alice:" in team_chunk[0]["text"]
    assert "For alice:" not in anonymous["context"]


def test_a_reader_whose_session_content_aged_out_gets_the_generic_summary_again(tenant: Tenant) -> None:
    from datetime import timedelta

    from django.utils import timezone

    t = tree(tenant)
    alice = _member(tenant, "alice")
    facts(t.team, TEAM_FACTS)
    _talk(t, "alice", [CONCERN])
    layer_summarize(layer=t.team)
    assert Summary.objects.filter(layer=t.team, personalized_for_id=alice).count() == 3
    layer_summarize(layer=t.team, now=timezone.now() + timedelta(days=15), trigger="interval")
    assert not Summary.objects.filter(layer=t.team, personalized_for_id=alice).exists()
