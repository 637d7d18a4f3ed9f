"""The supersessions page: every pending proposal of the workspace (old item, new item, similarity, reason,
detector, layer); operators and admins accept or reject over HTMX or a plain form, viewers only read;
another workspace's proposals are neither listed nor decided."""

from __future__ import annotations

import pytest
from django.test import Client

from apps.layers.models import Item, Layer, SupersessionProposal
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People

pytestmark = pytest.mark.django_db


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def proposal_in(
    tenant: Tenant, name: str, old_text: str, new_text: str, detector: str = "rules"
) -> SupersessionProposal:
    """A pending proposal as a detector leaves it (the detector itself: tests/layers/test_supersession_*)."""
    layer = layer_create(workspace=tenant.workspace, kind="project", name=name, parent=tenant.root)
    old, new = items_create(
        layer=layer,
        items=[
            ItemInput(kind="memory", type="fact", content=old_text),
            ItemInput(kind="memory", type="fact", content=new_text),
        ],
    )
    return SupersessionProposal.objects.create(
        workspace=tenant.workspace,
        layer=layer,
        old=old,
        new=new,
        similarity=0.9123,
        reason="same subject",
        detector=detector,
    )


@pytest.fixture
def proposals(people: People, tenant: Tenant, other_tenant: Tenant) -> tuple[SupersessionProposal, ...]:
    return (
        proposal_in(tenant, "People", "Alice lives in Paris.", "Alice moved to Berlin."),
        proposal_in(tenant, "Infra", "Deploys run on Fridays.", "Deploys run on Mondays now.", detector="llm:stand-in"),
        proposal_in(other_tenant, "Globex", "Bob lives in Rome.", "Bob moved to Oslo."),
    )


def test_it_lists_the_workspaces_pending_proposals_with_what_and_why(
    proposals: tuple[SupersessionProposal, ...],
) -> None:
    html = signed_in("vera").get("/supersessions/").content.decode()
    for p in proposals[:2]:
        assert f'id="supersession-{p.pk}"' in html
        assert f"#{p.old_id}" in html and f"#{p.new_id}" in html
    assert "Alice lives in Paris." in html and "Alice moved to Berlin." in html and "Infra" in html
    assert "0.912" in html and "same subject" in html and "llm:stand-in" in html
    assert "Bob lives in Rome." not in html  # globex's
    assert 'value="accept"' not in html  # a viewer reads only
    assert 'href="/supersessions/"' in html  # in the sidebar


def test_an_operator_accepts_over_htmx_and_the_list_is_swapped(proposals: tuple[SupersessionProposal, ...]) -> None:
    people_in_paris = proposals[0]
    client = signed_in("otto")
    assert 'value="accept"' in client.get("/supersessions/").content.decode()
    response = client.post(
        f"/supersessions/{people_in_paris.pk}/", {"decision": "accept"}, headers={"HX-Request": "true"}
    )
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section id="supersessions"')
    assert f"#{people_in_paris.new_id} now supersedes #{people_in_paris.old_id}." in html
    assert f'id="supersession-{people_in_paris.pk}"' not in html and f'id="supersession-{proposals[1].pk}"' in html
    assert Item.objects.get(pk=people_in_paris.old_id).superseded_by_id == people_in_paris.new_id
    people_in_paris.refresh_from_db()
    assert (people_in_paris.state, people_in_paris.decided_by) == ("accepted", "user otto")


def test_a_plain_form_rejects_and_comes_back_with_what_was_done(proposals: tuple[SupersessionProposal, ...]) -> None:
    infra = proposals[1]
    client = signed_in("ada")
    response = client.post(f"/supersessions/{infra.pk}/", {"decision": "reject"}, follow=True)
    html = response.content.decode()
    assert response.redirect_chain == [("/supersessions/", 302)]
    assert f"Kept #{infra.old_id} beside #{infra.new_id}." in html
    assert Item.objects.get(pk=infra.old_id).superseded_by_id is None
    again = client.post(f"/supersessions/{infra.pk}/", {"decision": "accept"}, headers={"HX-Request": "true"})
    assert "was rejected already" in again.content.decode()
    decided = client.get("/supersessions/", {"state": "all"}).content.decode()
    assert f'id="supersession-{infra.pk}"' in decided and "by user ada" in decided


def test_viewers_may_not_decide_nor_anyone_decide_another_workspaces_proposal(
    proposals: tuple[SupersessionProposal, ...],
) -> None:
    assert signed_in("vera").post(f"/supersessions/{proposals[0].pk}/", {"decision": "accept"}).status_code == 403
    assert signed_in("otto").post(f"/supersessions/{proposals[2].pk}/", {"decision": "accept"}).status_code == 404
    assert signed_in("otto").post(f"/supersessions/{proposals[0].pk}/", {"decision": "maybe"}).status_code == 400
    assert signed_in("otto").get(f"/supersessions/{proposals[0].pk}/").status_code == 405
    assert SupersessionProposal.objects.filter(state="pending").count() == 3


def test_the_list_reads_in_a_fixed_number_of_queries(
    people: People, tenant: Tenant, django_assert_max_num_queries
) -> None:
    for n in range(12):
        proposal_in(tenant, f"Layer {n}", f"Carol works on team {n}.", f"Carol moved to team {n + 100}.")
    client = signed_in("otto")
    client.get("/supersessions/")
    with django_assert_max_num_queries(8):
        html = client.get("/supersessions/").content.decode()
    assert html.count('<tr id="supersession-') == 12


def test_the_layer_page_decides_its_own_proposals_only(proposals: tuple[SupersessionProposal, ...]) -> None:
    people_in_paris, infra, _ = proposals
    client = signed_in("otto")
    wrong = client.post(f"/layers/{people_in_paris.layer_id}/proposals/{infra.pk}/", {"decision": "accept"})
    assert wrong.status_code == 404
    right = client.post(
        f"/layers/{infra.layer_id}/proposals/{infra.pk}/", {"decision": "reject"}, headers={"HX-Request": "true"}
    )
    assert right.status_code == 200 and f"Kept #{infra.old_id} beside #{infra.new_id}." in right.content.decode()
    assert Layer.objects.filter(pk=infra.layer_id).exists()
