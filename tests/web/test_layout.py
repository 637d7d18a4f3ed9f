"""The shared layout: sidebar, workspace landing and switching, roles, HTMX with an expired session, error pages."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.workspaces.models import Membership, Role, role_allows
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People

PAGES = ["/", "/layers/", "/preview/", "/experiments/"]


def signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


@pytest.mark.parametrize("url", PAGES)
def test_it_renders_every_page_with_the_layout_and_no_inline_code(people: People, url: str) -> None:
    response = signed_in("vera").get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert '<a class="skip-link" href="#main">' in html and 'id="main"' in html
    assert 'rel="icon"' in html
    assert 'aria-label="Breadcrumb"' in html
    for label in ("Dashboard", "Layers", "Profiles", "Preview", "Patterns"):
        if label in {"Profiles", "Patterns"} and f">{label}<" not in html:
            continue  # mounted by later commits; the sidebar lists only mounted areas
        assert f">{label}</a>" in html
    assert ">Console</a>" not in html  # developers and admins only
    assert re.search(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)", html) is None, "inline script"
    assert " style=" not in html and "<style" not in html, "inline style"


def test_it_marks_the_current_area_in_the_sidebar(people: People) -> None:
    html = signed_in("vera").get("/layers/").content.decode()
    assert '<a href="/layers/" aria-current="page">Layers</a>' in html
    assert '<a href="/" aria-current="page">' not in html


def test_it_lands_a_superuser_on_their_own_workspace_not_the_first_by_name(
    people: People, other_tenant: Tenant
) -> None:
    root = get_user_model().objects.get(username="root")
    Membership.objects.create(workspace=other_tenant.workspace, user=root, role=Role.ADMIN)
    response = signed_in("root").get("/")
    assert response.context["workspace"].slug == "globex"  # acme comes first by name
    assert response.context["access"].role == Role.ADMIN


def test_it_lands_a_new_session_on_the_workspace_last_switched_to(people: People, other_tenant: Tenant) -> None:
    first = signed_in("root")
    assert first.get("/").context["workspace"].slug == "acme"
    assert first.post("/workspace/", {"workspace": "globex", "next": "/layers/"}).status_code == 302
    later = signed_in("root")  # a new session: nothing in it yet
    assert later.get("/").context["workspace"].slug == "globex"


def test_it_sends_a_switch_back_to_the_area_not_to_an_object_of_the_old_workspace(
    people: People, other_tenant: Tenant
) -> None:
    response = signed_in("root").post("/workspace/", {"workspace": "globex", "next": "/layers/12/"})
    assert response["Location"] == "/layers/"
    offsite = signed_in("root").post("/workspace/", {"workspace": "globex", "next": "https://evil.example/"})
    assert offsite["Location"] == "/"


def test_it_refuses_a_switch_without_the_csrf_token(people: People) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="root", password=PASSWORD)
    assert client.post("/workspace/", {"workspace": "globex"}).status_code == 403


def test_it_answers_an_htmx_request_of_an_expired_session_with_hx_redirect(db: None) -> None:
    response = Client().get(
        "/preview/", {"query": "x"}, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/preview/?layer=3"
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login/?next=/preview/%3Flayer%3D3"
    assert response.content == b""  # nothing to swap: no login page inside the preview


def test_it_still_redirects_a_plain_request_to_the_login_page(db: None) -> None:
    response = Client().get("/layers/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/layers/"
    assert "HX-Redirect" not in response


def test_it_shows_a_styled_404_page_and_keeps_json_under_the_api(people: People) -> None:
    client = signed_in("vera")
    page = client.get("/no/such/page/")
    assert page.status_code == 404
    assert b"Nothing here" in page.content and b'class="skip-link"' in page.content
    assert client.get("/api/v1/nope/").json()["error"]["code"] == "not_found"


def test_it_shows_a_styled_403_page_to_a_viewer_in_the_console(people: People) -> None:
    page = signed_in("vera").get("/console/")
    assert page.status_code == 403
    assert b"You may not do this here" in page.content and b'class="sidebar"' in page.content


def test_it_orders_roles_viewer_operator_developer_admin() -> None:
    assert role_allows(role=Role.ADMIN, needed=Role.OPERATOR)
    assert role_allows(role=Role.OPERATOR, needed=Role.OPERATOR)
    assert role_allows(role=Role.DEVELOPER, needed=Role.OPERATOR)
    assert role_allows(role=Role.ADMIN, needed=Role.DEVELOPER)
    assert not role_allows(role=Role.VIEWER, needed=Role.OPERATOR)
    assert not role_allows(role=Role.OPERATOR, needed=Role.DEVELOPER)
    assert not role_allows(role=Role.DEVELOPER, needed=Role.ADMIN)
    assert not role_allows(role=None, needed=Role.VIEWER)
    assert not role_allows(role="owner", needed=Role.VIEWER)


def test_it_says_how_to_get_data_on_an_empty_dashboard(people: People) -> None:
    html = signed_in("vera").get("/").content.decode()
    assert "No context was assembled here in the last 24 hours." in html
    assert "POST /api/v1/context/" in html
