"""Tenants: a workspace, its company root, its API key secret and a client that sends it."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.test import APIClient

from apps.layers.models import Layer
from apps.workspaces.models import Scope, Workspace
from apps.workspaces.services import api_key_create, workspace_create


@dataclass
class Tenant:
    """A workspace, its company root, its API key secret and a client that sends it."""

    workspace: Workspace
    root: Layer
    secret: str
    client: APIClient


def make_tenant(slug: str) -> Tenant:
    workspace, created = workspace_create(slug=slug)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    root = Layer.objects.get(workspace=workspace, kind="company")
    return Tenant(workspace=workspace, root=root, secret=created.secret, client=client)


def admin_client(tenant: Tenant) -> APIClient:
    """A client with a new read+write+admin key of the tenant's workspace (key management needs `admin`)."""
    created = api_key_create(workspace=tenant.workspace, name="admin", scopes=list(Scope.values))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {created.secret}")
    return client
