"""workspace_create: the one way in (command, admin, pages); every workspace is born with its company layer."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from apps.core.errors import Conflict, InvalidInput
from apps.layers.models import Layer
from apps.summaries.models import LayerConfig
from apps.workspaces.models import Membership, Role, Workspace
from apps.workspaces.services import workspace_create, workspace_errors
from apps.workspaces.signals import workspace_created

pytestmark = pytest.mark.django_db


def test_it_makes_the_company_layer_with_its_config_and_the_admin_member() -> None:
    user = get_user_model().objects.create_user(username="founder", password="x")
    workspace, key = workspace_create(slug="initech", name="Initech", admin=user)
    root = Layer.objects.get(workspace=workspace)
    assert (root.kind, root.name, root.parent_id) == ("company", "Initech", None)
    assert LayerConfig.objects.get(layer=root).personalization == "generic"
    assert Membership.objects.get(workspace=workspace).role == Role.ADMIN
    assert key.api_key.workspace == workspace and key.secret


def test_it_gives_every_reason_at_once_and_raises_the_first() -> None:
    workspace_create(slug="taken")
    assert set(workspace_errors(slug="no spaces!", name="x" * 201)) == {"slug", "name"}
    assert workspace_errors(slug="taken")["slug"].code == "workspace_exists"
    with pytest.raises(Conflict):
        workspace_create(slug="taken")
    with pytest.raises(InvalidInput) as error:
        workspace_create(slug="")
    assert error.value.code == "invalid_slug"


def test_it_leaves_no_workspace_behind_when_a_receiver_fails() -> None:
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("a receiver failed")

    workspace_created.connect(broken, dispatch_uid="test-broken")
    try:
        with pytest.raises(RuntimeError):
            workspace_create(slug="halfway")
    finally:
        workspace_created.disconnect(dispatch_uid="test-broken")
    assert not Workspace.objects.filter(slug="halfway").exists()
    assert not Layer.objects.filter(name="halfway").exists()


def test_it_gives_a_workspace_made_before_the_hook_its_company_layer() -> None:
    """The data migration repairs the dead end: a workspace saved without one could never get one."""
    rootless = Workspace.objects.create(slug="legacy", name="Legacy")
    workspace_create(slug="fine")
    name = "0007_company_layer_for_every_workspace"
    migration = importlib.import_module(f"apps.layers.migrations.{name}")
    migration.forwards(MigrationLoader(connection).project_state(("layers", name)).apps, None)  # the models then
    assert Layer.objects.filter(workspace=rootless, kind="company").count() == 1
    assert LayerConfig.objects.filter(layer__workspace=rootless).count() == 1
    assert Layer.objects.filter(workspace__slug="fine", kind="company").count() == 1  # untouched
