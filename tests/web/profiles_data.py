"""A layer where one weight changes the context: an important but barely relevant item and a tight budget.

At 42 tokens two chunks fit (any two of the four leave too little for a third). By default the
lunch note (importance 1.0 against the facts' 0.8, found only by the word "billing") ranks below
two facts; with the importance weight at 50 it goes first and one of the facts drops out.
"""

from __future__ import annotations

from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from tests.support.tenants import Tenant

QUERY = "when does the billing cron job run?"
BUDGET = 62  # two of the four chunks (their markdown header carries the day and confidence)
LUNCH = "The billing team has lunch together on Fridays."


def billing_layer(tenant: Tenant) -> Layer:
    layer = layer_create(workspace=tenant.workspace, kind="project", name="Billing", parent=tenant.root)
    items_create(
        layer=layer,
        items=[
            ItemInput(
                kind="memory",
                type="fact",
                content="The billing cron job runs at 02:00 UTC every night.",
                importance=0.8,
            ),
            ItemInput(
                kind="memory",
                type="fact",
                content="Invoices are generated nightly by the billing cron job.",
                importance=0.8,
            ),
            ItemInput(
                kind="memory",
                type="fact",
                content="Failed card payments are retried three times by billing.",
                importance=0.8,
            ),
            ItemInput(kind="memory", type="fact", content=LUNCH, importance=1.0),
        ],
    )
    return layer
