"""Invitations: the one way into a workspace besides creating it. A link with a role, stored hashed,
accepted once by a signed-in person (their consent), until it expires or is revoked; and its API for
admin-scoped keys."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from threading import Barrier, Thread

import pytest
from django.contrib.auth.models import AbstractUser
from django.db import connections
from django.utils import timezone

from apps.core.errors import Conflict, NotFound
from apps.workspaces.invitations import invitation_accept, invitation_create, invitation_revoke
from apps.workspaces.models import Invitation, Membership, Role
from apps.workspaces.selectors import invitation_valid
from tests.support.tenants import Tenant, admin_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(django_user_model: type[AbstractUser]) -> AbstractUser:
    return django_user_model.objects.create_user("alice", password="x" * 12)


def test_only_the_tokens_hash_is_stored_and_the_link_works_once(tenant: Tenant, alice: AbstractUser) -> None:
    created = invitation_create(workspace=tenant.workspace, role=Role.DEVELOPER, note="Alice from QA")
    row = Invitation.objects.get()
    assert row.token_hash == hashlib.sha256(created.token.encode()).hexdigest()
    assert created.token not in str(list(Invitation.objects.values()))
    assert invitation_valid(token=created.token) == row

    membership = invitation_accept(token=created.token, user=alice)
    assert (membership.workspace, membership.role) == (tenant.workspace, Role.DEVELOPER)
    row.refresh_from_db()
    assert row.accepted_by == alice and row.accepted_at is not None and row.state == "accepted"
    assert invitation_valid(token=created.token) is None
    with pytest.raises(NotFound) as used:
        invitation_accept(token=created.token, user=alice)
    assert used.value.code == "invitation_invalid"


def test_an_expired_or_revoked_or_unknown_link_is_refused_alike(
    tenant: Tenant, alice: AbstractUser, django_user_model: type[AbstractUser]
) -> None:
    expired = invitation_create(workspace=tenant.workspace, role=Role.VIEWER)
    Invitation.objects.filter(pk=expired.invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    revoked = invitation_create(workspace=tenant.workspace, role=Role.ADMIN)
    invitation_revoke(invitation=revoked.invitation)
    for token in (expired.token, revoked.token, "inv_unknown", ""):
        with pytest.raises(NotFound) as refused:
            invitation_accept(token=token, user=alice)
        assert refused.value.code == "invitation_invalid"
    assert not Membership.objects.filter(user=alice).exists()
    assert Invitation.objects.get(pk=expired.invitation.pk).state == "expired"
    assert Invitation.objects.get(pk=revoked.invitation.pk).state == "revoked"


def test_accepting_never_lowers_a_members_role(tenant: Tenant, alice: AbstractUser) -> None:
    Membership.objects.create(workspace=tenant.workspace, user=alice, role=Role.OPERATOR)
    invitation_accept(token=invitation_create(workspace=tenant.workspace, role=Role.VIEWER).token, user=alice)
    assert Membership.objects.get(user=alice).role == Role.OPERATOR
    invitation_accept(token=invitation_create(workspace=tenant.workspace, role=Role.DEVELOPER).token, user=alice)
    assert Membership.objects.get(user=alice).role == Role.DEVELOPER


def test_a_used_invitation_cannot_be_revoked(tenant: Tenant, alice: AbstractUser) -> None:
    created = invitation_create(workspace=tenant.workspace, role=Role.VIEWER)
    invitation_accept(token=created.token, user=alice)
    with pytest.raises(Conflict) as refused:
        invitation_revoke(invitation=Invitation.objects.get())
    assert refused.value.code == "invitation_accepted"


def test_it_refuses_an_unknown_role_or_a_long_note(tenant: Tenant) -> None:
    for role, note, code in (("owner", "", "invalid_role"), (Role.VIEWER, "x" * 201, "invalid_note")):
        with pytest.raises(Exception) as refused:
            invitation_create(workspace=tenant.workspace, role=role, note=note)
        assert getattr(refused.value, "code", None) == code
    assert not Invitation.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_people_racing_for_one_link_let_exactly_one_in(
    tenant: Tenant, django_user_model: type[AbstractUser]
) -> None:
    created = invitation_create(workspace=tenant.workspace, role=Role.OPERATOR)
    people = [django_user_model.objects.create_user(f"racer{n}", password="x" * 12) for n in range(2)]
    start = Barrier(2)
    outcomes: list[str] = []

    def accept(user: AbstractUser) -> None:
        start.wait()
        try:
            invitation_accept(token=created.token, user=user)
            outcomes.append("in")
        except NotFound:
            outcomes.append("refused")
        finally:
            connections.close_all()

    threads = [Thread(target=accept, args=(person,)) for person in people]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["in", "refused"]
    assert Membership.objects.filter(workspace=tenant.workspace, user__in=people).count() == 1


def test_an_admin_key_makes_lists_and_revokes_invitations(tenant: Tenant, other_tenant: Tenant) -> None:
    admin = admin_client(tenant)
    made = admin.post("/api/v1/invitations/", {"role": "developer", "note": "Bob", "days": 3}, format="json")
    assert made.status_code == 201
    body = made.json()
    assert body["role"] == "developer" and body["state"] == "pending" and body["note"] == "Bob"
    assert body["url"] == f"http://testserver/invite/{body['token']}/"
    assert invitation_valid(token=body["token"]) is not None
    expires = Invitation.objects.get().expires_at - timezone.now()
    assert timedelta(days=3) - timedelta(minutes=1) < expires <= timedelta(days=3)
    assert Invitation.objects.get().created_by_key is not None

    listed = admin.get("/api/v1/invitations/").json()
    assert listed["count"] == 1 and "token" not in listed["results"][0] and "url" not in listed["results"][0]
    revoked = admin.post(f"/api/v1/invitations/{body['id']}/revoke/")
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert invitation_valid(token=body["token"]) is None

    theirs = admin_client(other_tenant).post("/api/v1/invitations/", {"role": "viewer"}, format="json").json()
    assert admin.post(f"/api/v1/invitations/{theirs['id']}/revoke/").json()["error"]["code"] == ("invitation_not_found")
    assert Invitation.objects.get(pk=theirs["id"]).revoked_at is None


def test_the_invitations_api_needs_an_admin_key_and_valid_input(tenant: Tenant) -> None:
    for response in (
        tenant.client.get("/api/v1/invitations/"),
        tenant.client.post("/api/v1/invitations/", {"role": "admin"}, format="json"),
    ):
        assert response.status_code == 403 and response.json()["error"]["code"] == "insufficient_scope"
    admin = admin_client(tenant)
    for data, field in (
        ({"role": "owner"}, "role"),
        ({"role": "viewer", "days": 0}, "days"),
        ({"role": "viewer", "days": 91}, "days"),
        ({"role": "viewer", "username": "olga"}, "username"),  # nobody is added by name
    ):
        refused = admin.post("/api/v1/invitations/", data, format="json")
        assert refused.status_code == 400, data
        assert field in str(refused.json()["error"]), data
    assert not Invitation.objects.exists()


def test_a_repeated_invitation_request_never_shows_the_link_again(tenant: Tenant) -> None:
    admin = admin_client(tenant)
    body = {"role": "viewer", "note": "Carol"}
    made = admin.post("/api/v1/invitations/", body, format="json", HTTP_IDEMPOTENCY_KEY="invite-carol")
    assert made.status_code == 201
    again = admin.post("/api/v1/invitations/", body, format="json", HTTP_IDEMPOTENCY_KEY="invite-carol")
    assert again.status_code == 409 and again["Idempotent-Replayed"] == "true"
    error = again.json()["error"]
    assert error["code"] == "invitation_link_not_replayed" and error["details"] == {"id": made.json()["id"]}
    assert made.json()["token"] not in again.content.decode()
    assert Invitation.objects.count() == 1
