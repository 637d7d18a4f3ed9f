"""`context_preview(profile_draft=...)`: unsaved profile settings stand in for the stored ones, nothing is written."""

from __future__ import annotations

import pytest

from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.services import context_preview
from apps.core.errors import InvalidInput
from apps.profiles.models import AgentProfile
from apps.profiles.selectors import profile_settings
from apps.profiles.services import ProfileInput, profile_create
from tests.support.tenants import Tenant
from tests.web.profiles_data import BUDGET, LUNCH, QUERY, billing_layer


def test_a_draft_changes_the_context_without_touching_the_stored_profile_or_recording(tenant: Tenant) -> None:
    layer = billing_layer(tenant)
    stored = profile_create(workspace=tenant.workspace, name="coder", data=ProfileInput(token_budget=BUDGET))
    params = ContextParams(layer_id=layer.pk, query=QUERY, profile="coder", timeout_ms=0)
    saved = context_preview(workspace=tenant.workspace, params=params, profile_draft=profile_settings(profile=stored))
    draft = ProfileInput(token_budget=BUDGET, ranking_weights={"importance": 50})
    tried = context_preview(workspace=tenant.workspace, params=params, profile_draft=draft)
    assert LUNCH not in [chunk.text for chunk in saved.result.chunks]
    assert tried.result.chunks[0].text == LUNCH and tried.result.token_budget == BUDGET
    assert not AssemblyRecord.objects.exists()
    assert AgentProfile.objects.get(pk=stored.pk).ranking_weights == {}
    # The stored profile, by name, is what the saved settings gave, and is recorded like any preview.
    named = context_preview(workspace=tenant.workspace, params=params)
    assert [c.text for c in named.result.chunks] == [c.text for c in saved.result.chunks]
    assert AssemblyRecord.objects.count() == 1


def test_a_draft_is_checked_by_the_profiles_own_validator(tenant: Tenant) -> None:
    params = ContextParams(layer_id=tenant.root.pk, query="anything", timeout_ms=0)
    with pytest.raises(InvalidInput) as refused:
        context_preview(
            workspace=tenant.workspace, params=params, profile_draft=ProfileInput(ranking_weights={"loudness": 2})
        )
    assert refused.value.code == "invalid_ranking_weights"
