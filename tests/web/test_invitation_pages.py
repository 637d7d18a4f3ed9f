"""The invitation link's page, /invite/<token>/: sign up and join, or sign in and accept; once, with consent."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.utils import timezone

from apps.workspaces.invitations import invitation_create, invitation_revoke
from apps.workspaces.models import Invitation, Membership, Role
from tests.support.tenants import Tenant
from tests.web.harness import PASSWORD
from tests.web.people import People


def link(tenant: Tenant, role: str = Role.OPERATOR) -> str:
    return f"/invite/{invitation_create(workspace=tenant.workspace, role=role).token}/"


def sign_up(client: Client, url: str, username: str) -> object:
    return client.post(url, {"username": username, "password1": PASSWORD, "password2": PASSWORD})


def test_a_new_person_signs_up_through_the_link_and_sees_only_that_workspace(people: People, tenant: Tenant) -> None:
    url = link(tenant, Role.DEVELOPER)
    client = Client()
    page = client.get(url)
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    html = page.content.decode()
    assert tenant.workspace.name in html and "<strong>developer</strong>" in html
    assert f'href="/login/?next={url}"' in html

    joined = sign_up(client, url, "nina")
    assert joined.status_code == 302 and joined["Location"] == "/"
    nina = get_user_model().objects.get(username="nina")
    assert not nina.is_staff and not nina.is_superuser
    assert [(m.workspace, m.role) for m in Membership.objects.filter(user=nina)] == [(tenant.workspace, "developer")]
    home = client.get("/")
    assert home.context["access"].available == [tenant.workspace] and home.context["access"].role == "developer"
    assert "You joined" in home.content.decode()
    assert Invitation.objects.get().accepted_by == nina

    again = Client().get(url)
    assert again.status_code == 404 and b"This invitation cannot be used" in again.content


def test_someone_with_an_account_signs_in_then_accepts_with_a_click(
    people: People, tenant: Tenant, other_tenant: Tenant
) -> None:
    url = link(tenant, Role.VIEWER)
    client = Client()
    signed_in = client.post(f"/login/?next={url}", {"username": "olga", "password": PASSWORD, "next": url})
    assert signed_in.status_code == 302 and signed_in["Location"] == url
    offer = client.get(url).content.decode()
    assert "Join as olga" in offer
    assert not Membership.objects.filter(workspace=tenant.workspace, user__username="olga").exists()  # not yet
    assert client.post(url).status_code == 302
    assert Membership.objects.get(workspace=tenant.workspace, user__username="olga").role == Role.VIEWER
    assert Membership.objects.get(workspace=other_tenant.workspace, user__username="olga").role == Role.DEVELOPER
    assert client.get("/").context["workspace"] == tenant.workspace  # switched to the one just joined


def test_every_unusable_link_gets_the_same_404(people: People, tenant: Tenant) -> None:
    expired = invitation_create(workspace=tenant.workspace, role=Role.ADMIN)
    Invitation.objects.filter(pk=expired.invitation.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    revoked = invitation_create(workspace=tenant.workspace, role=Role.ADMIN)
    invitation_revoke(invitation=revoked.invitation)
    used = link(tenant)
    assert sign_up(Client(), used, "first").status_code == 302
    answers = []
    for url in (f"/invite/{expired.token}/", f"/invite/{revoked.token}/", used, "/invite/inv_nope/"):
        for client, method in ((Client(), "get"), (Client(), "post")):
            response = getattr(client, method)(url, {"username": "eve", "password1": PASSWORD, "password2": PASSWORD})
            answers.append((response.status_code, re.sub(r"[A-Za-z0-9]{64}", "", response.content.decode())))
    assert len(set(answers)) == 1 and answers[0][0] == 404
    assert not get_user_model().objects.filter(username="eve").exists()
    assert not Membership.objects.filter(workspace=tenant.workspace, role=Role.ADMIN).exclude(user__username="ada")


def test_a_sign_up_shows_every_error_and_creates_nothing_and_logs_no_link(
    people: People, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    url = link(tenant)
    with caplog.at_level(logging.DEBUG):
        refused = Client().post(url, {"username": "bad name!", "password1": "short", "password2": "other"})
        assert Client().get(url.replace("/inv_", "/inv_x")).status_code == 404  # a mistyped link
    assert url.split("/")[2] not in caplog.text  # the token: a secret while the link works
    assert refused.status_code == 422
    assert set(refused.context["form"].errors) == {"username", "password2"}
    assert not Membership.objects.filter(workspace=tenant.workspace, user__username="bad name!").exists()
    assert Invitation.objects.get().state == "pending"


@override_settings(RATE_LIMIT_LOGIN_ADDRESS_FAILURES=(3, 300))
def test_taken_usernames_count_against_the_address_like_wrong_passwords(
    people: People, tenant: Tenant, one_window: None
) -> None:
    url = link(tenant)
    client = Client()
    statuses = [sign_up(client, url, name).status_code for name in ("vera", "otto", "ada", "nina")]
    assert statuses == [422, 422, 422, 429]
    assert not get_user_model().objects.filter(username="nina").exists()
    assert Invitation.objects.get().state == "pending"
