"""Allow-list patterns cannot hang a worker: validation budget, length cap, timeout at redaction time."""

from __future__ import annotations

import logging
import time

import pytest

from apps.core.errors import InvalidInput
from apps.redaction.models import AllowKind, AllowlistEntry
from apps.redaction.services import allowlist_entry_create
from tests.conftest import Tenant

# Backtracks exponentially, in `re` and in `regex`, on a long run of word characters holding a "y".
SLOW = r"(?:\w|\w\w)+y"
GITHUB_TOKEN = "ghp_k3Jd8sLq0ZxV5nB2mC7rT1yW9eA4uH6gF0pQ"


def post_pattern(tenant: Tenant, value: str) -> tuple[int, dict[str, object], float]:
    started = time.monotonic()
    response = tenant.client.post("/api/v1/redaction/allowlist/", {"kind": "pattern", "value": value}, format="json")
    return response.status_code, response.json(), time.monotonic() - started


def test_a_slow_pattern_is_rejected_quickly(tenant: Tenant) -> None:
    status, body, seconds = post_pattern(tenant, SLOW)
    assert seconds < 2
    assert status == 400
    error = body["error"]
    assert isinstance(error, dict) and error["code"] == "invalid_pattern" and "too slow" in error["message"]
    assert not AllowlistEntry.objects.filter(workspace_id=tenant.workspace.pk).exists()


def test_the_reviewers_pattern_does_not_hang_validation(tenant: Tenant) -> None:
    """`(\\w|\\w)*!` hung `re` for minutes; `regex` answers at once (it is harmless there, so it may stay)."""
    status, _, seconds = post_pattern(tenant, r"(\w|\w)*!")
    assert seconds < 2
    assert status in (201, 400)


def test_a_long_pattern_is_rejected(tenant: Tenant) -> None:
    with pytest.raises(InvalidInput) as raised:
        allowlist_entry_create(workspace=tenant.workspace, kind=AllowKind.PATTERN, value="a" * 501)
    assert raised.value.code == "invalid_pattern"


def test_a_stored_slow_pattern_cannot_hang_redaction(tenant: Tenant, caplog: pytest.LogCaptureFixture) -> None:
    AllowlistEntry.objects.create(workspace=tenant.workspace, kind=AllowKind.PATTERN, value=SLOW)
    AllowlistEntry.objects.create(workspace=tenant.workspace, kind=AllowKind.PATTERN, value=r"sk_test_FAKE\w+")
    text = f"token {GITHUB_TOKEN} and again {GITHUB_TOKEN}, fixture sk_test_FAKEFAKEFAKEFAKE1234"
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="apps.redaction.allowpatterns"):
        response = tenant.client.post("/api/v1/redact/", {"text": text}, format="json")
    assert time.monotonic() - started < 2
    assert response.status_code == 200
    # The slow entry counts as not matching (the token is redacted); the other entry still works.
    assert response.json()["text"] == (
        "token [REDACTED:github_token] and again [REDACTED:github_token], fixture sk_test_FAKEFAKEFAKEFAKE1234"
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "timed out" in warnings[0]
    assert GITHUB_TOKEN not in warnings[0]
