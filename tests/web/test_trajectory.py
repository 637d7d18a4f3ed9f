"""A session's trajectory: its assemblies turn by turn, tokens by kind, zones, and what entered and left."""

from __future__ import annotations

import pytest

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.layers.services import ItemInput, items_create
from apps.web.selectors.trajectory import session_trajectory
from tests.support.tenants import Tenant
from tests.web.sessions_data import Conversation, conversation_create


@pytest.fixture
def chat(tenant: Tenant) -> Conversation:
    conversation = conversation_create(workspace=tenant.workspace, parent=tenant.root)
    items_create(
        layer=conversation.layer,
        items=[ItemInput(kind="memory", type="fact", content="The payment queue retries three times.")],
    )
    return conversation


def assemble(tenant: Tenant, chat: Conversation, **params: object) -> str:
    result = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=chat.layer.pk, timeout_ms=0, **params),  # type: ignore[arg-type]
    )
    return result.trace_id


def test_it_lists_assemblies_in_time_order_with_tokens_by_kind_and_what_moved(
    tenant: Tenant, chat: Conversation
) -> None:
    first = assemble(tenant, chat, query="payment queue retries", token_budget=300)
    second = assemble(tenant, chat, query="payment queue retries", token_budget=2000)
    third = assemble(
        tenant, chat, query="dashboards tomorrow", token_budget=2000, context_window=4000, tokens_used=2500
    )
    trajectory = session_trajectory(layer=chat.layer)
    assert [turn.trace_id for turn in trajectory.turns] == [first, second, third]
    one, two, three = trajectory.turns
    assert "message" in one.tokens_by_kind
    for turn in trajectory.turns:
        assert 0 < sum(turn.tokens_by_kind.values()) <= turn.tokens_used <= turn.token_budget
    assert one.entered and not one.left  # the first turn brings everything in
    assert len(two.included) > len(one.included)  # a bigger budget holds more
    assert set(two.entered) == set(two.included - one.included)
    assert set(two.left) == set(one.included - two.included)
    assert (three.zone, three.zone_changed) == ("soft_warning", True)
    assert all(trajectory.labels[key] for key in (*two.entered, *two.left))
    assert len(two.entered_labels) == len(two.entered) and len(two.left_labels) == len(two.left)
    assert len(one.entered_labels) == len(one.included)
    assert trajectory.max_tokens >= max(turn.token_budget for turn in trajectory.turns)


def test_a_cache_hit_shows_the_tokens_of_the_answer_it_came_from(tenant: Tenant, chat: Conversation) -> None:
    original = assemble(tenant, chat, query="payment queue retries", token_budget=500)
    repeat = assemble(tenant, chat, query="payment queue retries", token_budget=500)
    assert repeat == original  # a cached answer names the trace it came from
    turns = session_trajectory(layer=chat.layer).turns
    assert len(turns) == 2
    assert turns[1].cached
    assert turns[1].tokens_by_kind == turns[0].tokens_by_kind
    assert turns[1].included == turns[0].included
    assert not turns[1].entered and not turns[1].left


def test_it_leaves_other_sessions_out(tenant: Tenant, chat: Conversation) -> None:
    other = conversation_create(workspace=tenant.workspace, parent=tenant.root, external_id="chat-2")
    assemble(tenant, other, query="payment queue retries", token_budget=300)
    assert session_trajectory(layer=chat.layer).turns == []
    assert len(session_trajectory(layer=other.layer).turns) == 1


def test_it_reads_a_long_trajectory_in_a_fixed_number_of_queries(
    tenant: Tenant, chat: Conversation, django_assert_max_num_queries: object
) -> None:
    for budget in (200, 400, 600, 800, 1000, 1200):
        assemble(tenant, chat, query="payment queue retries", token_budget=budget)
    with django_assert_max_num_queries(5):  # type: ignore[operator]
        assert len(session_trajectory(layer=chat.layer).turns) == 6


def test_a_window_reads_its_own_turns_and_compares_its_first_with_the_turn_before(
    tenant: Tenant, chat: Conversation
) -> None:
    ids = [assemble(tenant, chat, query="payment queue retries", token_budget=budget) for budget in (200, 900, 400)]
    whole = session_trajectory(layer=chat.layer)
    window = session_trajectory(layer=chat.layer, end=2, span=1, label_included=True)
    assert (window.total, window.start, window.end) == (3, 1, 2)
    assert [turn.trace_id for turn in window.turns] == [ids[1]]
    assert window.turns[0] == whole.turns[1]  # entered and left as in the whole trajectory
    assert window.overview == [(turn.tokens_used, turn.token_budget) for turn in whole.turns]
    assert all(key in window.labels for key in window.turns[0].included)


def test_the_sessions_list_counts_the_same_assemblies_as_each_sessions_page(
    tenant: Tenant, django_assert_max_num_queries: object
) -> None:
    from apps.assembly.models import AssemblyRecord
    from apps.layers.services import layer_create
    from apps.web.selectors.sessions import sessions_list

    conversation = layer_create(
        workspace=tenant.workspace, kind="multi_session", name="Retry storm", parent=tenant.root, external_id="m-1"
    )
    session = layer_create(workspace=tenant.workspace, kind="session", name="Day 1", parent=conversation)

    def record(layer_id: int, session_id: str = "") -> AssemblyRecord:
        return AssemblyRecord(
            workspace=tenant.workspace,
            layer_id=layer_id,
            session=session_id,
            request={"query": "q"},
            model="gpt-4o",
            encoding="o200k_base",
            tokens_used=10,
            token_budget=100,
            items_included=1,
            elapsed_ms=1.0,
        )

    AssemblyRecord.objects.bulk_create(
        [
            record(session.pk),
            record(session.pk),
            record(conversation.pk),
            record(tenant.root.pk, "m-1"),  # made elsewhere, naming the conversation as its session
            record(tenant.root.pk),  # neither
        ]
    )
    with django_assert_max_num_queries(3):  # type: ignore[operator]
        rows = {row.id: row.assemblies for row in sessions_list(workspace=tenant.workspace)}
    assert rows == {conversation.pk: 4, session.pk: 2}
    for layer in (conversation, session):
        assert rows[layer.pk] == len(session_trajectory(layer=layer).turns)


def test_a_partial_turn_is_marked_on_the_sessions_page(tenant: Tenant, chat: Conversation, client: object) -> None:
    from django.contrib.auth import get_user_model

    from apps.workspaces.models import Membership, Role

    whole = assemble(tenant, chat, query="payment queue retries", token_budget=300)
    partial = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=chat.layer.pk, query="dashboards tomorrow", token_budget=300, timeout_ms=1),
    ).trace_id
    turns = {turn.trace_id: turn for turn in session_trajectory(layer=chat.layer).turns}
    assert turns[partial].partial and not turns[whole].partial
    user = get_user_model().objects.create_user(username="pat", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    client.force_login(user)  # type: ignore[attr-defined]
    html = client.get(f"/sessions/{chat.layer.pk}/").content.decode()  # type: ignore[attr-defined]
    assert html.count('<span class="badge warn">partial</span>') == 1


def test_an_htmx_request_gets_the_region_it_targets_alone(tenant: Tenant, chat: Conversation, client: object) -> None:
    from django.contrib.auth import get_user_model

    from apps.workspaces.models import Membership, Role

    assemble(tenant, chat, query="payment queue retries", token_budget=300)
    user = get_user_model().objects.create_user(username="pat", password="x" * 12)
    Membership.objects.create(workspace=tenant.workspace, user=user, role=Role.VIEWER)
    client.force_login(user)  # type: ignore[attr-defined]
    url = f"/sessions/{chat.layer.pk}/"
    for target, absent in (("messages", 'id="trajectory"'), ("turn-context", 'id="messages"')):
        html = client.get(  # type: ignore[attr-defined]
            f"{url}?q=retry&turn=1", HTTP_HX_REQUEST="true", HTTP_HX_TARGET=target
        ).content.decode()
        assert html.lstrip().startswith(f'<section id="{target}"') and absent not in html
    opened = client.get(f"{url}?turn=1", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="turn-context")  # type: ignore[attr-defined]
    assert "In context at turn 1" in opened.content.decode()
    page = client.get(f"{url}?turn=1").content.decode()  # type: ignore[attr-defined]
    assert page.count("<section") == 5 and "In context at turn 1" in page
