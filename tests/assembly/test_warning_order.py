"""An answer's warnings come in the order its stages ran: resolving's, gathering's, then what the
result lacks (clients compare them, so the order is part of the answer)."""

from __future__ import annotations

import pytest

from tests.support.api import ask, layer
from tests.support.tenants import Tenant


@pytest.mark.django_db
def test_it_says_resolvings_warnings_then_gatherings_then_the_results(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s-order")
    body = ask(
        tenant,
        layer=session,
        query="zeppelins",
        profile="nobody",
        agent_type="coder",
        token_budget=500,
        context_window=1000,
        tokens_used=650,
    )
    assert body["warnings"] == [
        "unknown profile 'nobody'; using the defaults",
        "budget capped at 200 tokens: 1000 x (1 - 0.15) - 650",
        "token zone soft_warning: 650 of 1000 tokens already used",
        "No context packages found",
        "the context is empty: no content matched this request",
    ]


@pytest.mark.django_db
def test_with_no_budget_left_it_says_resolvings_warnings_then_that_the_context_is_empty(tenant: Tenant) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s-full")
    body = ask(tenant, layer=session, query="otters", profile="nobody", context_window=1000, tokens_used=960)
    assert body["warnings"] == [
        "unknown profile 'nobody'; using the defaults",
        "budget capped at 0 tokens: 1000 x (1 - 0.15) - 960",
        "token zone emergency: 960 of 1000 tokens already used",
        "the context is empty: no budget is left in this zone",
    ]
