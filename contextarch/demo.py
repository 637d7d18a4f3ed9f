"""The demo workspace that `make run` seeds once: a layer hierarchy, realistic items and an admin login.

The API key secret and the admin password are shown once at creation like any other, so they
are kept in a credentials file (mode 600) under var/ for every later `make run` to print again.
If that file is lost or no longer matches the database, a new key and password are issued.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from apps.core.embeddings import EmbeddingError
from apps.layers.embedder import items_embed_pending
from apps.layers.models import Item, Layer, LayerKind
from apps.layers.services import ItemInput, items_create, layer_create
from apps.summaries.services import summarize_due_layers
from apps.workspaces.models import Role, Workspace
from apps.workspaces.selectors import api_key_get_active
from apps.workspaces.services import api_key_create, membership_set, workspace_create
from contextarch.demo_content import conversation, layer_items

log = logging.getLogger(__name__)

DEMO_SLUG = "demo"
DEMO_NAME = "Northwind Commerce"
ADMIN_USERNAME = "admin"


@dataclass(frozen=True)
class DemoCredentials:
    """What a person needs to use the demo: the workspace's API key and the admin login."""

    workspace: str
    api_key: str
    username: str
    password: str


@dataclass(frozen=True)
class DemoResult:
    credentials: DemoCredentials
    created: bool
    layers: int
    items: int
    embedded: int
    pending: int  # items still waiting for their embedding (the provider failed; the sweep retries)
    embedding_error: str = ""


def demo_seed(*, credentials_path: Path) -> DemoResult:
    """Create the demo once (later calls only check and print it), then embed whatever is pending."""
    workspace = Workspace.objects.filter(slug=DEMO_SLUG).first()
    created = workspace is None
    if workspace is None:
        workspace, credentials = _demo_create()
    else:
        stored = demo_credentials_read(path=credentials_path)
        valid = stored is not None and _credentials_valid(credentials=stored, workspace=workspace)
        credentials = stored if stored is not None and valid else _credentials_renew(workspace=workspace)
    _credentials_write(path=credentials_path, credentials=credentials)
    embedded, embedding_error = 0, ""
    try:
        embedded = items_embed_pending(workspace_id=workspace.pk)
    except EmbeddingError as exc:  # the provider is down: serve anyway, keyword search until the sweep embeds
        log.warning("demo items wait for their embeddings: %s", exc.message)
        embedding_error = exc.message
    summarize_due_layers(workspace_id=workspace.pk, extractive=True)  # every layer gets its summaries, offline
    return DemoResult(
        credentials=credentials,
        created=created,
        layers=Layer.objects.filter(workspace=workspace).count(),
        items=Item.objects.filter(workspace=workspace).count(),
        embedded=embedded,
        pending=Item.objects.filter(workspace=workspace, embedding__isnull=True).count(),
        embedding_error=embedding_error,
    )


def demo_credentials_read(*, path: Path) -> DemoCredentials | None:
    """The stored credentials, or None when the file is missing or unreadable."""
    try:
        return DemoCredentials(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _credentials_write(*, path: Path, credentials: DemoCredentials) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(asdict(credentials), handle, indent=2)
    path.chmod(0o600)  # os.open's mode does not apply to a file that already existed


def _credentials_valid(*, credentials: DemoCredentials, workspace: Workspace) -> bool:
    key = api_key_get_active(secret=credentials.api_key)
    user = get_user_model().objects.filter(username=credentials.username).first()
    return (
        key is not None
        and key.workspace_id == workspace.pk
        and user is not None
        and user.check_password(credentials.password)
    )


def _admin_with_new_password(*, workspace: Workspace) -> tuple[str, str]:
    """The demo superuser (created if missing) with a freshly generated password, as an admin member."""
    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    user = user_model.objects.filter(username=ADMIN_USERNAME).first()
    if user is None:
        user = user_model.objects.create_superuser(ADMIN_USERNAME, "admin@example.com", password)
    else:
        user.set_password(password)
        user.is_staff = user.is_superuser = user.is_active = True
        user.save()
    membership_set(workspace=workspace, user=user, role=Role.ADMIN)
    return ADMIN_USERNAME, password


@transaction.atomic
def _credentials_renew(*, workspace: Workspace) -> DemoCredentials:
    key = api_key_create(workspace=workspace, name=f"demo {timezone.now():%Y-%m-%d %H:%M}")
    username, password = _admin_with_new_password(workspace=workspace)
    return DemoCredentials(workspace=workspace.slug, api_key=key.secret, username=username, password=password)


@transaction.atomic
def _demo_create() -> tuple[Workspace, DemoCredentials]:
    workspace, key = workspace_create(slug=DEMO_SLUG, name=DEMO_NAME, key_name="demo")
    username, password = _admin_with_new_password(workspace=workspace)
    _demo_content(workspace=workspace)
    credentials = DemoCredentials(workspace=workspace.slug, api_key=key.secret, username=username, password=password)
    return workspace, credentials


def _demo_content(*, workspace: Workspace) -> None:
    company = Layer.objects.get(workspace=workspace, kind=LayerKind.COMPANY)
    org = layer_create(workspace=workspace, kind=LayerKind.ORG, name="Engineering", parent=company)
    team = layer_create(workspace=workspace, kind=LayerKind.TEAM, name="Payments Platform", parent=org)
    project = layer_create(workspace=workspace, kind=LayerKind.PROJECT, name="Checkout reliability", parent=team)
    thread = layer_create(
        workspace=workspace,
        kind=LayerKind.MULTI_SESSION,
        name="Retry storm investigation",
        parent=project,
        external_id="demo-retry-investigation",
    )
    session = layer_create(
        workspace=workspace,
        kind=LayerKind.SESSION,
        name="Agent session 1",
        parent=thread,
        external_id="demo-session-0001",
    )
    layers = {"company": company, "org": org, "team": team, "project": project, "multi_session": thread}
    for kind, items in layer_items(now=timezone.now()).items():
        items_create(layer=layers[kind], items=items)
    _conversation_create(session=session, turns=conversation())


def _conversation_create(*, session: Layer, turns: list[tuple[int | None, ItemInput]]) -> None:
    """Messages one at a time, each linked to the earlier turn it answers (two turns branch from one)."""
    start = timezone.now() - timedelta(minutes=len(turns) * 3)
    ids: list[int] = []
    for index, (parent_index, message) in enumerate(turns):
        message.parent = ids[parent_index] if parent_index is not None else None
        message.created_at = start + timedelta(minutes=index * 3)
        (item,) = items_create(layer=session, items=[message])
        ids.append(item.pk)
