"""The conversation graph of a session: branches in lanes, communities, and the resolution the engine
would give each message at the current turn (FULL / SUMMARY / TITLE / HIDDEN)."""

from __future__ import annotations

import pytest

from apps.web.selectors.conversation_graph import conversation_graph
from tests.conftest import Tenant
from tests.web.sessions_data import TURNS, Conversation, conversation_create


@pytest.fixture
def chat(tenant: Tenant) -> Conversation:
    return conversation_create(workspace=tenant.workspace, parent=tenant.root)


def resolution_at(chat: Conversation, distance: int) -> str:
    graph = conversation_graph(layer=chat.layer)
    return next(node.resolution for node in graph.nodes if node.id == chat.at_distance(distance))


def test_it_gives_recent_turns_full_detail_then_summaries_then_titles_then_nothing(chat: Conversation) -> None:
    # balanced preset: full within 5 turns, summary within 20, title within 50, hidden beyond
    graph = conversation_graph(layer=chat.layer)
    by_id = {node.id: node for node in graph.nodes}
    # the fork (a second reply to turn 40) is the newest by id but not by time: distances count by time
    assert by_id[chat.at_distance(1)].resolution == "full"
    assert by_id[chat.at_distance(5)].resolution == "full"
    assert by_id[chat.at_distance(7)].resolution == "summary"
    assert by_id[chat.at_distance(20)].resolution == "summary"
    assert by_id[chat.at_distance(22)].resolution == "title"
    assert by_id[chat.at_distance(50)].resolution == "title"
    assert by_id[chat.at_distance(52)].resolution == "hidden"


def test_it_keeps_an_important_decision_and_a_pinned_turn_whole_however_far_back(chat: Conversation) -> None:
    graph = conversation_graph(layer=chat.layer)
    by_id = {node.id: node for node in graph.nodes}
    decision = by_id[chat.at_distance(31)]
    assert decision.important and decision.resolution == "full"
    pinned = by_id[chat.at_distance(56)]
    assert pinned.pinned and pinned.resolution == "full"


def test_it_hides_far_community_members_behind_their_summary(chat: Conversation) -> None:
    graph = conversation_graph(layer=chat.layer)
    by_id = {node.id: node for node in graph.nodes}
    for distance in (25, 26, 27):  # one more than when written: the fork is newer
        node = by_id[chat.at_distance(distance)]
        assert node.resolution == "hidden"
        assert "community" in node.why
        assert node.communities == (chat.community.pk,)
        assert node.colour
    assert [(c.key, c.size) for c in graph.communities] == [("T-7", 3)]


def test_it_draws_a_fork_as_a_second_lane(chat: Conversation) -> None:
    graph = conversation_graph(layer=chat.layer)
    by_id = {node.id: node for node in graph.nodes}
    assert graph.lanes == 2 and graph.forks == 1
    assert by_id[chat.fork].lane == 1
    assert {by_id[i].lane for i in chat.ids} == {0}
    assert len(graph.edges) == TURNS  # 59 links along the main line and the fork's one
    fork_edge = next(edge for edge in graph.edges if edge.child == chat.fork)
    assert fork_edge.parent == chat.ids[40] and fork_edge.path.startswith("M") and " C" in fork_edge.path


def test_a_richer_preset_shows_more_and_the_counts_add_up(chat: Conversation) -> None:
    balanced = dict(conversation_graph(layer=chat.layer).counts)
    rich = dict(conversation_graph(layer=chat.layer, preset="context_rich").counts)
    assert rich["full"] > balanced["full"]
    assert rich["hidden"] < balanced["hidden"]
    assert sum(balanced.values()) == sum(rich.values()) == TURNS + 1


def test_it_reads_the_graph_in_a_fixed_number_of_queries(
    chat: Conversation, django_assert_max_num_queries: object
) -> None:
    with django_assert_max_num_queries(5):  # type: ignore[operator]
        conversation_graph(layer=chat.layer)
