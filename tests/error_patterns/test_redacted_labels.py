"""group_id, agent_type and solutions are redacted like errors, on attempts and on context requests alike."""

from __future__ import annotations

import pytest

from apps.assembly.models import AssemblyRecord
from apps.error_patterns.models import Attempt, HintInjection
from apps.layers.models import Layer
from tests.error_patterns.attempts import ERROR, context, hints, pattern, report
from tests.support.tenants import Tenant

TOKEN = "ghp_R8x2Lq9Vb4Nw7Kc1Mz5Tf3Hd6Jy0Ps2Ae8Ug"
GROUP = f"https://ci.example.com/run/42?token={TOKEN}"
AGENT = "deployer password=Winter2026!"


def test_an_attempts_labels_and_bare_passwords_in_its_solution_are_stored_redacted(
    tenant: Tenant, session: Layer
) -> None:
    body = report(
        tenant,
        session,
        "succeeded",
        group_id=GROUP,
        agent_type=AGENT,
        solution="Re-ran `docker login -u ci -p hunter2 registry.example.com`; the admin password: Spring2026",
    )
    attempt = Attempt.objects.get(pk=body["id"])
    stored = f"{attempt.group_id} {attempt.agent_type} {attempt.solution} {body}"
    for secret in (TOKEN, "Winter2026!", "hunter2", "Spring2026"):
        assert secret not in stored
    assert attempt.group_id == "https://ci.example.com/run/42?token=[REDACTED:github_token]"
    assert attempt.agent_type == "deployer password=[REDACTED:password]"
    listed = tenant.client.get("/api/v1/attempts/", {"layer": session.pk}).content.decode()
    assert TOKEN not in listed and "Winter2026!" not in listed


@pytest.mark.usefixtures("fact")
def test_a_context_requests_labels_are_redacted_and_still_match_the_attempts(tenant: Tenant, session: Layer) -> None:
    known = pattern(tenant, confidence=0.8, solution="Run manage.py migrate.")
    assert hints(context(tenant, session, error=ERROR, group_id=GROUP, agent_type=AGENT))
    record = AssemblyRecord.objects.get(workspace=tenant.workspace)
    injection = HintInjection.objects.get(pattern=known)
    stored = f"{record.group_id} {record.agent_type} {record.request} {injection.group_id} {injection.agent_type}"
    assert TOKEN not in stored and "Winter2026!" not in stored

    failed = report(tenant, session, "failed", error=ERROR, group_id=GROUP, agent_type=AGENT)
    assert failed["lowered"] == [known.pk]  # the same labels, redacted the same way on both sides


def test_a_long_label_stays_within_its_column_after_redaction(tenant: Tenant, session: Layer) -> None:
    group = ("x" * 180) + " password=hunter2"  # the marker is longer than the secret
    body = report(tenant, session, "failed", error=ERROR, group_id=group)
    attempt = Attempt.objects.get(pk=body["id"])
    assert len(attempt.group_id) <= 200 and "hunter2" not in attempt.group_id
