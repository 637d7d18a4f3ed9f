"""The conversation graph of a session: branches in lanes, communities, and the resolution the engine
would give each message at the current turn (FULL / SUMMARY / TITLE / HIDDEN)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from apps.web.selectors.conversation_graph import MESSAGES_PER_PAGE, conversation_graph, messages_page
from tests.support.tenants import Tenant
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
    # one line per branch, and a curve only where a branch forks off
    assert [(edge.parent, edge.child) for edge in graph.edges] == [(chat.ids[40], chat.fork)]
    assert graph.edges[0].path.startswith("M") and " C" in graph.edges[0].path
    assert len(graph.lane_lines) == 2


def test_it_draws_the_line_in_runs_of_one_resolution_whatever_the_length(chat: Conversation) -> None:
    graph = conversation_graph(layer=chat.layer)
    main = [run for run in graph.runs if run.lane == 0]
    assert sum(run.count for run in graph.runs) == TURNS + 1
    assert len(main) < 12  # a handful of strokes, not a circle per message
    assert all(a.resolution != b.resolution for a, b in pairwise(main))
    assert main[-1].resolution == "full" and main[-1].x2 <= graph.width
    assert all(0 <= node.x <= graph.width for node in graph.nodes)  # 61 messages fit the drawing's width
    (band,) = [b for b in graph.bands if b.community == chat.community.pk]
    members = [node.x for node in graph.nodes if chat.community.pk in node.communities]
    assert band.x <= min(members) and band.x + band.width >= max(members)


def test_a_chat_written_without_links_is_one_line_not_a_branch_per_turn(tenant: Tenant) -> None:
    from apps.layers.services import ItemInput, items_create, layer_create

    layer = layer_create(workspace=tenant.workspace, kind="session", name="Unlinked", parent=tenant.root)
    items_create(layer=layer, items=[ItemInput(kind="message", role="user", content=f"turn {i}") for i in range(30)])
    graph = conversation_graph(layer=layer)
    assert (graph.lanes, graph.forks, graph.edges) == (1, 0, [])
    assert {node.lane for node in graph.nodes} == {0}
    assert graph.total == 30 and graph.height < 60


def test_the_messages_are_listed_a_page_at_a_time_newest_first_and_searched(chat: Conversation) -> None:
    graph = conversation_graph(layer=chat.layer)
    shown, matches, page, pages = messages_page(graph=graph)
    assert (len(shown), matches, page, pages) == (MESSAGES_PER_PAGE, TURNS + 1, 1, 7)
    assert [node.number for node in shown] == list(range(TURNS + 1, TURNS + 1 - MESSAGES_PER_PAGE, -1))
    shown, matches, page, pages = messages_page(graph=graph, q="A DIFFERENT answer")
    assert ([node.id for node in shown], matches, pages) == ([chat.fork], 1, 1)
    assert messages_page(graph=graph, page=99)[2] == 7  # past the end: the last page


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
