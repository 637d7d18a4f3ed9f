"""The models whose rows assembly reads are registered by the apps that own them, and a save or a
delete of any of them changes its workspace's content version (so no cached context outlives it)."""

from __future__ import annotations

import pytest

from apps.assembly.models import OutputTemplate
from apps.core import versions
from apps.core.signals import VERSIONED
from apps.profiles.models import AgentProfile
from tests.support.tenants import Tenant


def test_each_app_registers_the_models_assembly_reads() -> None:
    assert {model._meta.label for model in VERSIONED} == {
        "layers.Layer",
        "layers.Item",
        "layers.Relationship",
        "summaries.LayerConfig",
        "summaries.Summary",
        "error_patterns.ErrorPattern",
        "profiles.AgentProfile",
        "assembly.OutputTemplate",
    }


@pytest.mark.django_db(transaction=True)
def test_a_save_and_a_delete_of_a_registered_model_change_the_content_version(tenant: Tenant) -> None:
    workspace_id = tenant.workspace.pk
    seen = [versions.content_version(workspace_id)]
    profile = AgentProfile.objects.create(workspace=tenant.workspace, name="reviewer")
    seen.append(versions.content_version(workspace_id))
    template = OutputTemplate.objects.create(workspace=tenant.workspace, name="plain", body="{content}")
    seen.append(versions.content_version(workspace_id))
    profile.delete()
    seen.append(versions.content_version(workspace_id))
    template.delete()
    seen.append(versions.content_version(workspace_id))
    assert len(set(seen)) == len(seen)
