"""Wrong passwords at /login/ and /admin/login/: a burst is stopped per address and username pair, and
nobody elsewhere (nor anyone at the owner's address, once the owner's browser has signed in) can lock
the real owner out; `manage.py login_unlock` is the reset path."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser
from django.core.management import call_command
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_window")]

PASSWORD = "correct horse battery"


@pytest.fixture
def admin_user(django_user_model: type[AbstractUser]) -> AbstractUser:
    return django_user_model.objects.create_superuser("admin", "admin@example.com", PASSWORD)


def guess(client: Client, username: str, times: int, *, address: str = "127.0.0.1") -> list[int]:
    return [
        client.post("/login/", {"username": username, "password": f"guess{i}"}, REMOTE_ADDR=address).status_code
        for i in range(times)
    ]


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_it_stops_a_burst_of_30_wrong_passwords(admin_user: AbstractUser, path: str) -> None:
    client = Client()
    statuses = [client.post(path, {"username": "admin", "password": f"guess{i}"}).status_code for i in range(30)]
    assert statuses == [200] * 10 + [429] * 20  # RATE_LIMIT_LOGIN_FAILURES = 10/300 per address and username
    refused = client.post(path, {"username": "admin", "password": PASSWORD})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 300
    assert b"Too many sign-in attempts" in refused.content
    assert "_auth_user_id" not in client.session  # not even the right password gets in from this address


def test_an_attacker_elsewhere_cannot_lock_the_owner_out(admin_user: AbstractUser) -> None:
    attacker = Client()
    assert guess(attacker, "admin", 30, address="10.6.6.6") == [200] * 10 + [429] * 20
    owner = Client()
    signed_in = owner.post("/login/", {"username": "admin", "password": PASSWORD}, REMOTE_ADDR="10.1.1.1")
    assert signed_in.status_code == 302 and owner.session["_auth_user_id"] == str(admin_user.pk)


def test_guessing_from_many_addresses_gets_ten_tries_at_each(admin_user: AbstractUser) -> None:
    client = Client()
    for n in range(3):
        assert guess(client, "admin", 11, address=f"10.0.0.{n}") == [200] * 10 + [429]


def test_one_address_trying_many_usernames_is_stopped_by_the_address_limit(
    admin_user: AbstractUser, django_user_model: type[AbstractUser]
) -> None:
    django_user_model.objects.create_user("ada", password=PASSWORD)
    attacker = Client(REMOTE_ADDR="10.6.6.6")
    for n in range(5):
        assert guess(attacker, f"user{n}", 10, address="10.6.6.6") == [200] * 10  # 50 = the address limit
    assert attacker.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 429
    elsewhere = Client(REMOTE_ADDR="10.9.9.9")
    assert elsewhere.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302


def test_a_browser_that_signed_in_before_is_not_locked_out_by_someone_at_the_same_address(
    admin_user: AbstractUser,
) -> None:
    owner = Client()
    assert owner.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302
    owner.post("/logout/")
    assert "ca_known_browser" in owner.cookies and owner.cookies["ca_known_browser"]["httponly"]

    neighbour = Client()  # same address (an office behind one NAT), no cookie
    assert guess(neighbour, "admin", 60) == [200] * 10 + [429] * 50
    assert owner.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302


def test_a_known_browser_still_gets_only_ten_wrong_passwords(admin_user: AbstractUser) -> None:
    browser = Client()
    assert browser.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302
    browser.post("/logout/")
    assert guess(browser, "admin", 12) == [200] * 10 + [429] * 2


def test_a_cookie_for_another_username_or_a_forged_one_does_not_help(
    admin_user: AbstractUser, django_user_model: type[AbstractUser]
) -> None:
    django_user_model.objects.create_user("ada", password=PASSWORD)
    client = Client()
    assert client.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 302
    client.post("/logout/")
    assert guess(client, "admin", 11) == [200] * 10 + [429]  # ada's browser, not admin's
    client.cookies["ca_known_browser"] = "admin:forged"
    assert guess(client, "admin", 1) == [429]


def test_login_unlock_is_the_reset_path(admin_user: AbstractUser) -> None:
    client = Client()
    assert guess(client, "admin", 11) == [200] * 10 + [429]
    call_command("login_unlock", "ADMIN")  # usernames compare case-insensitively, as they are counted
    assert client.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302

    sprayer = Client()  # no cookie: its browser never signed in
    for n in range(5):
        guess(sprayer, f"user{n}", 10)
    assert guess(sprayer, "admin", 1) == [429]  # the address limit
    call_command("login_unlock", "admin", address="127.0.0.1")
    assert guess(sprayer, "admin", 1) == [200]


def test_a_person_who_mistypes_a_few_times_still_signs_in(admin_user: AbstractUser) -> None:
    client = Client()
    for _ in range(3):
        assert client.post("/login/", {"username": "admin", "password": "typo"}).status_code == 200
    assert client.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302
    assert client.get("/login/").status_code == 302  # signed in: the login page sends them on
