"""Building blocks for the summary tests: a small hierarchy with realistic items, and the LLM stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.fake_provider import FakeProvider, fake_provider
from tests.support.tenants import Tenant

TEAM_FACTS = [
    "The payments team owns the charge service and its retry worker.",
    "Charges are retried up to three times with exponential backoff before the order fails.",
    "Every charge request carries an idempotency key derived from the order id.",
    "Stripe is the primary card processor and Adyen the fallback for EU cards.",
    "On 4 March the retry worker ignored Retry-After and overloaded Stripe with requests.",
    "The fix honours Retry-After and keeps the cap of three retries.",
    "Card numbers never reach our logs; the tokenizer service replaces them first.",
]
COMPANY_FACTS = [
    "Every production incident gets an incident commander within five minutes.",
    "Production runs in eu-west-1 and us-east-1; EU customer data never leaves eu-west-1.",
]


@dataclass
class Tree:
    company: Layer
    org: Layer
    team: Layer
    project: Layer
    session: Layer


def tree(tenant: Tenant) -> Tree:
    org = layer_create(workspace=tenant.workspace, kind="org", name="Engineering", parent=tenant.root)
    team = layer_create(workspace=tenant.workspace, kind="team", name="Payments", parent=org)
    project = layer_create(workspace=tenant.workspace, kind="project", name="Retry queue", parent=team)
    session = layer_create(workspace=tenant.workspace, kind="session", name="Session 1", parent=project)
    return Tree(company=tenant.root, org=org, team=team, project=project, session=session)


def facts(layer: Layer, texts: list[str], **extra: object) -> None:
    items_create(layer=layer, items=[ItemInput(kind="memory", type="fact", content=t, **extra) for t in texts])  # type: ignore[arg-type]


REPLY = {
    "sentence": "The payments team fixed the retry storm by honouring Retry-After.",
    "paragraph": "The payments team owns the charge service. On 4 March its retry worker ignored Retry-After "
    "and overloaded Stripe; the fix honours Retry-After and keeps three retries.",
    "detailed": "The payments team owns the charge service and its retry worker. Charges are retried three times "
    "with exponential backoff. On 4 March the worker ignored Retry-After and overloaded Stripe. The fix honours "
    "Retry-After, keeps the cap of three retries and ships behind a flag.",
}


@contextmanager
def summary_llm(**scripted: Any) -> Iterator[FakeProvider]:
    """The OpenAI-compatible stand-in as the summaries' LLM sees it: it answers the three depths of
    `REPLY` as JSON and counts 1,200 prompt and 300 completion tokens per call."""
    with fake_provider(**{"reply": dict(REPLY), "prompt_tokens": 1200, "completion_tokens": 300, **scripted}) as llm:
        yield llm
