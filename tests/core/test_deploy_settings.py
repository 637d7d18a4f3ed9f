"""Deployments behind TLS: SECURE_* from the environment, `check --deploy` clean; secrets at rest 0600."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client, override_settings

from contextarch.secret_file import secret_file_value

BEHIND_TLS = {
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SESSION_COOKIE_SECURE": "1",
    "CSRF_COOKIE_SECURE": "1",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
}


def check_deploy(tmp_path: Path, extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": "postgres://u:p@127.0.0.1:1/unused",  # the check never connects
        "CONTEXTARCH_VAR_DIR": str(tmp_path / "var"),
        **extra,
    }
    command = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    return subprocess.run(command, cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_the_secure_settings_from_the_environment(tmp_path: Path) -> None:
    plain = check_deploy(tmp_path, {})
    assert plain.returncode != 0
    assert {"security.W004", "security.W008", "security.W012", "security.W016"} <= {
        word.strip("():") for word in plain.stderr.split() if word.startswith("(security.")
    }
    behind_tls = check_deploy(tmp_path, BEHIND_TLS)
    assert behind_tls.returncode == 0, behind_tls.stderr
    assert "no issues" in behind_tls.stdout


@pytest.mark.django_db
@override_settings(
    SECURE_SSL_REDIRECT=True,
    SECURE_HSTS_SECONDS=3600,
    SESSION_COOKIE_SECURE=True,
    CSRF_COOKIE_SECURE=True,
    SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https"),
)
def test_behind_a_tls_proxy_it_redirects_plain_http_and_sends_hsts_and_secure_cookies() -> None:
    client = Client()
    redirected = client.get("/login/")
    assert redirected.status_code == 301 and redirected["Location"] == "https://testserver/login/"
    page = client.get("/login/", HTTP_X_FORWARDED_PROTO="https")
    assert page.status_code == 200
    assert page["Strict-Transport-Security"] == "max-age=3600"
    assert page.cookies["csrftoken"]["secure"] is True
    assert "default-src 'self'" in page["Content-Security-Policy"]
    assert client.get("/metrics").status_code != 301  # scrapers and probes may speak plain HTTP


def test_a_secret_file_is_created_owner_only_and_an_old_wide_one_is_tightened(tmp_path: Path) -> None:
    fresh = tmp_path / "var" / "secret_key"
    value = secret_file_value(fresh, generate=lambda: "s3cr3t-value")
    assert value == "s3cr3t-value" and stat.S_IMODE(fresh.stat().st_mode) == 0o600
    assert secret_file_value(fresh, generate=lambda: "another") == "s3cr3t-value"

    old = tmp_path / "old_key"
    old.write_text("kept\n")
    old.chmod(0o644)
    assert secret_file_value(old, generate=lambda: "unused") == "kept"
    assert stat.S_IMODE(old.stat().st_mode) == 0o600


def test_the_installations_secret_key_file_is_owner_only() -> None:
    key_file = Path(settings.VAR_DIR) / "secret_key"
    if not key_file.exists():
        pytest.skip("SECRET_KEY comes from the environment here")
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
