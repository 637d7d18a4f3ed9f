"""The trace explains each decision: the rank, the score as its formula with the record's weights, the
decision in words with the budget it lacked, the community standing in; it shows the request and the
context, filters its rows, links each to its item, and "why not?" packs the request again with a
candidate pinned, from where it can be pinned (issue 19 item 1)."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble, records_flush
from apps.layers.models import Item, Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Membership, Role
from tests.support.tenants import Tenant
from tests.web.sessions_data import Conversation, conversation_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=layer,
        items=[
            ItemInput(kind="memory", type="fact", content="Invoices are generated nightly by the billing cron job."),
            *(
                ItemInput(kind="document", content=f"Billing note {n}: invoices for region {n} go out in batches.")
                for n in range(10)
            ),
        ],
    )
    return layer


@pytest.fixture
def developer(client: Client, tenant: Tenant, django_user_model: type[AbstractUser]) -> Client:
    user = django_user_model.objects.create_user(username="grace", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.DEVELOPER)
    client.force_login(user)
    return client


def assembled(tenant: Tenant, layer: Layer, query: str, **params: object) -> AssemblyRecord:
    result = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=layer.pk, query=query, **{"timeout_ms": 0, **params}),  # type: ignore[arg-type]
    )
    records_flush()
    return AssemblyRecord.objects.get(trace_id=result.trace_id)


def test_a_candidate_left_out_for_the_budget_says_its_rank_who_spent_the_budget_and_what_it_lacked(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "invoices billing region", token_budget=60, format="text")
    view = developer.get(f"/console/traces/{record.trace_id}/").context["view"]
    ranked = [e for e in view.explained if e.rank is not None]
    assert [e.rank for e in ranked] == list(range(1, len(ranked) + 1))
    first_out = next(e for e in ranked if e.row.reason == "over_budget")
    last_in = max(e.rank for e in ranked if e.row.included and e.rank < first_out.rank)
    entry = next(t for t in record.trace if (t["source"], t["id"]) == (first_out.row.source, first_out.row.id))
    needed = entry["tokens"] - entry["room"]
    assert needed > 0
    assert first_out.why == (
        f"ranked {ordinal_of(first_out.rank)}; the budget was spent by #{last_in}; "
        f"would have needed {needed} more tokens ({entry['tokens']} for {entry['room']} free)"
    )
    included = next(e for e in ranked if e.row.included)
    assert included.why.startswith(f"ranked {ordinal_of(included.rank)}; in at full (")


def ordinal_of(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def test_the_score_is_written_as_its_formula_with_the_weights_of_the_record(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "invoices", token_budget=80)
    weights = record.request["resolved"]["weights"]
    assert weights["relevance"] == 0.8 and weights["recency"] == 0.05
    response = developer.get(f"/console/traces/{record.trace_id}/")
    for e in response.context["view"].explained:
        if e.rank is None:
            continue
        assert {t.name for t in e.terms} >= {"relevance", "recency", "importance"}
        assert sum(t.share for t in e.terms) == pytest.approx(e.row.score, abs=1e-5)
        assert e.formula.startswith("(0.80\u00d7") and e.formula.endswith(f"= {e.row.score:.3f}")
    assert "/ 0.95 = " in response.content.decode()  # relevance 0.8 + recency 0.05 + importance 0.1


def test_it_shows_the_request_as_sent_and_the_context_as_returned(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "when are invoices generated", token_budget=120)
    assert record.context and "Invoices are generated nightly" in record.context
    html = developer.get(f"/console/traces/{record.trace_id}/").content.decode()
    assert (
        '<details id="trace-request">' in html and "&quot;query&quot;: &quot;when are invoices generated&quot;" in html
    )
    context = re.search(r'aria-label="The context as returned">(.*?)</pre>', html, re.S)
    assert context is not None and "Invoices are generated nightly" in context.group(1)


def test_replay_comes_before_the_candidates_and_every_item_row_links_to_its_item(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "invoices", token_budget=80)
    html = developer.get(f"/console/traces/{record.trace_id}/").content.decode()
    assert html.index('id="replay"') < html.index('id="trace-table"')
    for item in Item.objects.filter(layer=project):
        assert f'href="/layers/{project.pk}/items/{item.pk}/"' in html


def test_the_filters_keep_the_rows_of_a_decision_origin_kind_and_text_and_htmx_gets_only_the_rows(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "invoices billing region", token_budget=60)
    url = f"/console/traces/{record.trace_id}/"
    out = developer.get(url, {"decision": "out"}).context["shown"]
    assert out and all(not e.row.included for e in out)
    memories = developer.get(url, {"kind": "memory"}).context["shown"]
    assert [e.row.kind for e in memories] == ["memory"]
    found = developer.get(url, {"q": "region 7"}).context["shown"]
    assert [e.row.excerpt for e in found] == ["Billing note 7: invoices for region 7 go out in batches."]
    origin = found[0].row.origin
    assert all(e.row.origin == origin for e in developer.get(url, {"origin": origin}).context["shown"])
    fragment = developer.get(url, {"q": "region 7"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="candidate-rows")
    html = fragment.content.decode().strip()
    assert html.startswith('<div id="candidate-rows">') and "1 of " in html and "<h1" not in html


def test_why_not_packs_the_request_again_with_the_candidate_pinned_and_names_what_it_displaces_then_pins_it(
    developer: Client, tenant: Tenant, project: Layer
) -> None:
    record = assembled(tenant, project, "invoices billing region", token_budget=60)
    left = next(t for t in record.trace if t["reason"] == "over_budget")
    url = f"/console/traces/{record.trace_id}/why-not/item/{left['id']}/"
    html = developer.post(url, HTTP_HX_REQUEST="true").content.decode().strip()
    assert html.startswith('<section id="why-not"')
    assert "left out: did not fit the token budget" in html  # today
    assert 'id="why-not-table"' in html and "Would leave the context" in html
    assert "Pin this item" in html
    assert AssemblyRecord.objects.filter(workspace=tenant.workspace).count() == 1  # nothing recorded

    pinned = developer.post(f"/console/traces/{record.trace_id}/pin/{left['id']}/", HTTP_HX_REQUEST="true")
    assert 'id="pin-done"' in pinned.content.decode()
    assert Item.objects.get(pk=left["id"]).pinned
    again = assembled(tenant, project, "invoices billing region", token_budget=60)
    assert any(t["id"] == left["id"] and t["decision"] != "excluded" for t in again.trace)


def test_why_not_without_javascript_shows_the_whole_page(developer: Client, tenant: Tenant, project: Layer) -> None:
    record = assembled(tenant, project, "invoices billing region", token_budget=60)
    left = next(t for t in record.trace if t["reason"] == "over_budget")
    response = developer.post(f"/console/traces/{record.trace_id}/why-not/item/{left['id']}/")
    assert (
        response.status_code == 200 and b'id="trace-table"' in response.content and b"Pin this item" in response.content
    )


def test_a_viewer_may_not_pin_from_a_trace(
    client: Client, tenant: Tenant, project: Layer, django_user_model: type[AbstractUser]
) -> None:
    record = assembled(tenant, project, "invoices", token_budget=60)
    user = django_user_model.objects.create_user(username="vic", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.OPERATOR)
    client.force_login(user)
    item = Item.objects.filter(layer=project).first()
    assert item is not None
    assert client.post(f"/console/traces/{record.trace_id}/pin/{item.pk}/").status_code == 403
    assert not Item.objects.get(pk=item.pk).pinned


def test_a_message_a_community_stands_in_for_names_the_community_and_whether_it_got_in(
    developer: Client, tenant: Tenant
) -> None:
    chat: Conversation = conversation_create(workspace=tenant.workspace, parent=tenant.root)
    record = assembled(tenant, chat.layer, "what about the office plants", token_budget=8000)
    stood = [
        e
        for e in developer.get(f"/console/traces/{record.trace_id}/").context["view"].explained
        if e.row.reason == "in_community"
    ]
    assert stood, "the task community stands in for its far members"
    community = next(t for t in record.trace if t["source"] == "community" and t["id"] == chat.community.pk)
    fate = "which got in" if community["decision"] != "excluded" else "which was left out too"
    for e in stood:
        assert e.why.startswith(f"stood in for by community “{chat.community.title}” (#") and fate in e.why
