"""The audit trail page: a workspace admin reads who changed what and when, with old and new values
(secrets masked), filters by kind, actor, action, dates and text, pages through; other roles get 403
and nobody sees another workspace's changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.web.selectors.audit import PAGE_SIZE
from apps.workspaces.audit import acting_as, record, user_actor
from apps.workspaces.models import AuditEntry, AuditTarget
from tests.support.tenants import Tenant, admin_client
from tests.web.harness import PASSWORD
from tests.web.people import People

pytestmark = pytest.mark.django_db
UPSTREAM_KEY = "sk-audit-page-0123456789abcdefghijkl"


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


@pytest.fixture
def changes(people: People, tenant: Tenant, other_tenant: Tenant) -> None:
    """A profile and an item changed over the API, an upstream with a key, a role changed by ada, and
    one change in globex that acme must never show."""
    c = tenant.client
    assert c.post("/api/v1/profiles/", {"name": "qa", "token_budget": 600}, format="json").status_code == 201
    assert c.put("/api/v1/profiles/qa/", {"name": "qa", "token_budget": 900}, format="json").status_code == 200
    item = c.post(
        "/api/v1/items/",
        {"layer": tenant.root.pk, "kind": "memory", "type": "fact", "content": "Kiwi deploys on Fridays."},
        format="json",
    ).json()
    assert (
        c.patch(f"/api/v1/items/{item['id']}/", {"content": "Kiwi deploys on Mondays."}, format="json").status_code
        == 200
    )
    upstream = {"base_url": "http://127.0.0.1:9/v1/", "key": UPSTREAM_KEY}
    assert admin_client(tenant).put("/api/v1/upstreams/openai/", upstream, format="json").status_code in (200, 201)
    with acting_as(user_actor(user_id=None, username="ada")):
        record(
            workspace_id=tenant.workspace.pk,
            target_kind=AuditTarget.MEMBER,
            action="update",
            target_id=1,
            target_label="vera",
            old={"role": "viewer"},
            new={"role": "operator"},
        )
    other_tenant.client.post("/api/v1/profiles/", {"name": "globex-secret-plan"}, format="json")


def test_an_admin_sees_who_changed_what_with_old_and_new_values_and_secrets_masked(
    changes: None, tenant: Tenant
) -> None:
    response = signed_in("ada").get("/audit/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Kiwi deploys on Fridays." in html and "Kiwi deploys on Mondays." in html
    assert "600" in html and "900" in html
    assert "•••• (set)" in html and UPSTREAM_KEY not in html
    prefix = tenant.secret[:10]
    assert f"({prefix}…)" in html and tenant.secret not in html  # API changes name their key, never its secret
    assert "globex-secret-plan" not in html  # another workspace's trail
    assert 'id="audit-table"' in html and html.index("vera") < html.index("Kiwi deploys on Mondays.")  # newest first


def test_it_filters_by_kind_actor_action_dates_and_text(changes: None, tenant: Tenant) -> None:
    client = signed_in("ada")

    def shown(**params: str) -> set[str]:
        response = client.get("/audit/", params)
        assert response.status_code == 200
        ids = {str(pk) for pk in AuditEntry.objects.filter(workspace=tenant.workspace).values_list("pk", flat=True)}
        html = response.content.decode()
        return {pk for pk in ids if f'id="audit-{pk}"' in html}

    everything = shown()
    assert len(everything) == AuditEntry.objects.filter(workspace=tenant.workspace).count() >= 6

    def kinds(found: set[str]) -> set[str]:
        return set(AuditEntry.objects.filter(pk__in=found).values_list("target_kind", flat=True))

    assert kinds(shown(kind="profile")) == {"profile"}
    assert kinds(shown(actor="ada")) == {"member"}
    assert kinds(shown(actor="key")) >= {"profile", "item", "upstream"}
    assert {AuditEntry.objects.get(pk=pk).action for pk in shown(action="create")} == {"create"}
    assert kinds(shown(q="mondays")) == {"item"}  # within the old and new values, any case
    today = timezone.now().date()
    assert shown(since=str(today), until=str(today)) == everything  # whole days, both included
    assert shown(until=str(today - timedelta(days=1))) == set()
    bad = client.get("/audit/", {"since": str(today), "until": str(today - timedelta(days=1))})
    assert bad.status_code == 200 and "must not be before From" in bad.content.decode()
    assert {f'id="audit-{pk}"' in bad.content.decode() for pk in everything} == {True}  # unfiltered


def test_an_htmx_filter_answers_only_the_list(changes: None) -> None:
    response = signed_in("ada").get("/audit/", {"kind": "item"}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<section id="audit-entries"')
    assert "<form" not in html and "Kiwi deploys" in html and "HX-Request" in response["Vary"]


def test_it_pages_through_a_long_trail_in_a_fixed_number_of_queries(
    people: People, tenant: Tenant, django_assert_max_num_queries
) -> None:
    for n in range(PAGE_SIZE + 5):
        record(
            workspace_id=tenant.workspace.pk,
            target_kind="config",
            action="update",
            target_id=n,
            old={"a": n},
            new={"a": n + 1},
        )
    client = signed_in("ada")
    client.get("/audit/")  # the session's first page settles the workspace choice
    with django_assert_max_num_queries(8):
        first = client.get("/audit/", {"kind": "config"}).content.decode()
    assert first.count('<tr id="audit-') == PAGE_SIZE and "Page 1 of 2" in first
    assert "kind=config&amp;page=2" in first
    second = client.get("/audit/", {"kind": "config", "page": "2"}).content.decode()
    assert second.count('<tr id="audit-') == 5


def test_only_workspace_admins_open_it_and_see_its_link(changes: None) -> None:
    for username in ("vera", "otto", "dana"):
        client = signed_in(username)
        assert client.get("/audit/").status_code == 403
        assert 'href="/audit/"' not in client.get("/").content.decode()
    assert 'href="/audit/"' in signed_in("ada").get("/").content.decode()
    root = signed_in("root")  # a superuser is admin everywhere
    assert root.get("/audit/").status_code == 200
    assert Client().get("/audit/").status_code == 302  # to the login page
