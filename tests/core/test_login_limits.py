"""Wrong passwords at /login/ and /admin/login/: a burst is stopped, per address and per username."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractUser
from django.test import Client

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("one_window")]

PASSWORD = "correct horse battery"


@pytest.fixture
def admin_user(django_user_model: type[AbstractUser]) -> AbstractUser:
    return django_user_model.objects.create_superuser("admin", "admin@example.com", PASSWORD)


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_it_stops_a_burst_of_30_wrong_passwords(admin_user: AbstractUser, path: str) -> None:
    client = Client()
    statuses = [client.post(path, {"username": "admin", "password": f"guess{i}"}).status_code for i in range(30)]
    assert statuses == [200] * 10 + [429] * 20  # RATE_LIMIT_LOGIN_FAILURES = 10/300
    refused = client.post(path, {"username": "admin", "password": PASSWORD})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 300
    assert b"Too many sign-in attempts" in refused.content
    assert "_auth_user_id" not in client.session  # not even the right password gets in meanwhile


def test_it_limits_by_username_across_addresses_and_by_address_across_usernames(
    admin_user: AbstractUser, django_user_model: type[AbstractUser]
) -> None:
    django_user_model.objects.create_user("ada", password=PASSWORD)
    client = Client()
    for i in range(10):
        client.post("/login/", {"username": "admin", "password": "x"}, REMOTE_ADDR=f"10.0.0.{i}")
    assert client.post("/login/", {"username": "admin", "password": "x"}, REMOTE_ADDR="10.9.9.9").status_code == 429
    ada = client.post("/login/", {"username": "ada", "password": PASSWORD}, REMOTE_ADDR="10.9.9.9")
    assert ada.status_code == 302  # another user from a fresh address signs in

    attacker = Client(REMOTE_ADDR="10.6.6.6")
    for i in range(10):
        attacker.post("/login/", {"username": f"user{i}", "password": "x"})
    assert attacker.post("/login/", {"username": "ada", "password": PASSWORD}).status_code == 429


def test_a_person_who_mistypes_a_few_times_still_signs_in(admin_user: AbstractUser) -> None:
    client = Client()
    for _ in range(3):
        assert client.post("/login/", {"username": "admin", "password": "typo"}).status_code == 200
    assert client.post("/login/", {"username": "admin", "password": PASSWORD}).status_code == 302
    assert client.get("/login/").status_code == 302  # signed in: the login page sends them on
