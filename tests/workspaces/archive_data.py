"""A workspace worth archiving, written through the API: a hierarchy, every kind of item, a
conversation with a fork, relationships, summaries, communities, a profile excluding items, a template, a learned
error pattern, an allow-list entry and an upstream with a key."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from typing import Any

from rest_framework.test import APIClient

from apps.conversations.communities import communities_refresh
from apps.core import background
from apps.experiments.services import question_set_upload
from apps.layers.embedder import items_embed_pending
from tests.support.tenants import Tenant, admin_client

UPSTREAM_KEY = "sk-upstream-Archive-0123456789abcdef"
CONVERSATION = [
    ("user", "How do users log in to the billing portal?"),
    ("assistant", "They log in with Google OAuth; sessions last 30 minutes."),
    ("user", "The orders table in Postgres is slow again."),
    ("assistant", "Add an index on orders.created_at and vacuum the table."),
    ("user", "Should failed logins lock the account?"),
    ("assistant", "Decision: lock the account after 5 failed logins for 15 minutes."),
    ("user", "What about the reporting database?"),
    ("assistant", "The reporting database is a read replica refreshed hourly."),
]
MEMORIES = [
    ("fact", "Database backups are taken nightly at 02:00 UTC and kept for 35 days."),
    ("fact", "Restoring a backup of the main cluster takes about forty minutes."),
    ("decision", "We deploy to production every Tuesday after the staging sign-off."),
    ("entity", "Alice Moreau leads the billing team in Lyon."),
    ("fact", "The billing portal runs on Django 5.2 behind nginx."),
]
DOCS = [
    "Runbook: when the orders table is slow, check the autovacuum settings first, then missing indexes.",
    "Incident 42: the reporting replica lagged four hours because of a long analytics query.",
    "Onboarding: new engineers get read access to the reporting replica on their first day.",
]


@dataclass
class Archived:
    """Workspace A's admin client and the layers the context requests name (by external id)."""

    tenant: Tenant
    admin: APIClient
    layers: dict[str, int]


def _created(response: Any) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.content
    return response.json()


def layer(t: Tenant, kind: str, name: str, parent: int, external_id: str) -> int:
    body = {"kind": kind, "name": name, "parent": parent, "external_id": external_id}
    return _created(t.client.post("/api/v1/layers/", body, format="json"))["id"]


def item(t: Tenant, layer_id: int, **fields: Any) -> int:
    return _created(t.client.post("/api/v1/items/", {"layer": layer_id, **fields}, format="json"))["id"]


def build(t: Tenant) -> Archived:
    admin = admin_client(t)
    org = layer(t, "org", "Engineering", t.root.pk, "org-eng")
    team = layer(t, "team", "Billing", org, "team-billing")
    project = layer(t, "project", "Portal", team, "proj-portal")
    session = layer(t, "session", "chat 1", project, "sess-1")
    other = layer(t, "session", "chat 2", project, "sess-2")
    memories = [
        item(t, project, kind="memory", type=kind, content=text, external_id=f"mem-{n}", confidence=0.8)
        for n, (kind, text) in enumerate(MEMORIES)
    ]
    # A superseded fact (out of the contexts only while its `superseded_by` survives the round trip)
    # and a merged repeat (its count and external id kept).
    old = item(t, project, kind="memory", type="fact", content="Database backups are restored by hand from tape.")
    item(t, project, kind="memory", type="fact", content="Backups are restored with restore.sh.", supersedes=[old])
    repeat = {"layer": project, "kind": "memory", "type": "fact", "content": MEMORIES[0][1], "external_id": "mem-dup"}
    assert t.client.post("/api/v1/items/", repeat, format="json").status_code == 200
    docs = [
        item(t, team, kind="document", type="runbook", content=text, title=f"Doc {n}") for n, text in enumerate(DOCS)
    ]
    item(t, org, kind="spec", type="requirement", content="Every service exposes /healthz.", pinned=True)
    item(
        t,
        project,
        kind="package",
        type="strategy",
        content="When a query is slow, EXPLAIN ANALYZE it before adding indexes.",
        priority="high",
        group_id="perf",
        agent_types=["developer"],
    )
    turns = [item(t, session, kind="message", role=role, content=text, task_ids=["T-1"]) for role, text in CONVERSATION]
    fork = item(t, session, kind="message", role="user", content="Or passwords only?", parent=turns[3])
    item(t, session, kind="message", role="assistant", content="OAuth stays; passwords are a fallback.", parent=fork)
    item(t, other, kind="message", role="user", content="Is the reporting replica up to date?")
    for source, target, kind in ((docs[0], docs[1], "supports"), (docs[2], docs[1], "relates_to")):
        _created(
            t.client.post("/api/v1/relationships/", {"source": source, "target": target, "kind": kind}, format="json")
        )
    # The qa profile leaves out the restore time (its request asks about restores) and an item deleted
    # since, whose id stays in the list matching nothing.
    gone = item(t, project, kind="memory", type="fact", content="Backups used to be kept for a week.")
    body = {"name": "qa", "agent_type": "qa", "token_budget": 600, "preferred_format": "text"}
    _created(t.client.post("/api/v1/profiles/", {**body, "excluded_items": [memories[1], gone]}, format="json"))
    assert t.client.delete(f"/api/v1/items/{gone}/").status_code == 204
    _created(t.client.post("/api/v1/templates/", {"name": "bullets", "body": "- {content}"}, format="json"))
    failure = {"layer": session, "outcome": "failed", "group_id": "g1", "agent_type": "developer"}
    error = 'psycopg.errors.UndefinedTable: relation "orders_archive" does not exist'
    _created(t.client.post("/api/v1/attempts/", {**failure, "error": error}, format="json"))
    fixed = {**failure, "outcome": "succeeded", "solution": "Run the migration 0042 that creates orders_archive."}
    _created(t.client.post("/api/v1/attempts/", fixed, format="json"))
    _created(t.client.post("/api/v1/redaction/allowlist/", {"value": "AKIAIOSFODNN7EXAMPLE"}, format="json"))
    upstream = {"base_url": "http://127.0.0.1:9/v1/", "key": UPSTREAM_KEY}
    _created(admin.put("/api/v1/upstreams/openai/", upstream, format="json"))
    questions = b'{"question": "When are backups taken?", "expected": ["mem-0"]}\n'
    question_set_upload(workspace=t.workspace, name="ops", data=questions)  # the pages' upload: no API
    assert background.wait_idle(120)
    items_embed_pending(workspace_id=t.workspace.pk)
    for layer_id in (project, session):
        _created(t.client.post(f"/api/v1/layers/{layer_id}/summarize/", format="json"))
    communities_refresh(layer_id=session)
    assert background.wait_idle(120)
    names = {"org-eng": org, "team-billing": team, "proj-portal": project, "sess-1": session, "sess-2": other}
    return Archived(tenant=t, admin=admin, layers=names)


def members(archive: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        return {name: z.read(name) for name in z.namelist()}


def rezip(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()
