"""A conversation for the session pages: 60 turns one minute apart, a fork, an important decision,
a pinned turn and a task community, written through the layers service."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from apps.conversations.communities import communities_refresh
from apps.conversations.models import Community
from apps.layers.models import Layer
from apps.layers.services import ItemInput, items_create, layer_create
from apps.workspaces.models import Workspace
from tests.web.locomo_chat import LocomoChat

TURNS = 60


def turn_text(index: int) -> str:
    """Four sentences (over 280 characters), so every turn has a full, a summary and a title rung."""
    return (
        f"Turn {index} looks at the retry worker and the payment queue in some detail. "
        f"It lists what was tried for step {index}, what failed and what the logs said about it. "
        "It ends with the next thing to check before anyone changes the configuration again. "
        "Then it says who will look at the dashboards tomorrow morning and which alerts stay muted until then."
    )


@dataclass(frozen=True)
class Conversation:
    layer: Layer
    ids: list[int]  # oldest first; ids[-1] is the newest turn (distance 0)
    fork: int  # a second reply to ids[40]
    community: Community

    def at_distance(self, distance: int) -> int:
        """The message `distance` turns back from the newest, in time order (the fork included)."""
        in_time = [*self.ids[:41], self.fork, *self.ids[41:]]
        return in_time[-1 - distance]


def conversation_create(*, workspace: Workspace, parent: Layer, external_id: str = "chat-1") -> Conversation:
    session = layer_create(
        workspace=workspace, kind="session", name="Retry storm", parent=parent, external_id=external_id
    )
    start = timezone.now() - timedelta(hours=3)
    ids: list[int] = []
    for index in range(TURNS):
        decided = index == TURNS - 31  # distance 30
        pinned = index == TURNS - 56  # distance 55
        created = items_create(
            layer=session,
            items=[
                ItemInput(
                    kind="message",
                    role="user" if index % 2 == 0 else "assistant",
                    content=("We decided to cap retries at three. " if decided else "") + turn_text(index),
                    created_at=start + timedelta(minutes=index),
                    parent=ids[-1] if ids else None,
                    importance=0.9 if decided else 0.5,
                    pinned=pinned,
                    task_ids=["T-7"] if TURNS - 27 <= index <= TURNS - 25 else [],
                )
            ],
        )
        ids.append(created[0].pk)
    fork = items_create(
        layer=session,
        items=[
            ItemInput(
                kind="message",
                role="assistant",
                content="A different answer to turn 40. " + turn_text(99),
                created_at=start + timedelta(minutes=40, seconds=30),
                parent=ids[40],
            )
        ],
    )[0].pk
    # the turns at distance 24, 25 and 26 share a task (beyond the balanced summary distance of 20)
    communities_refresh(layer_id=session.pk, force=True)
    community = Community.objects.get(layer=session, kind="task", key="T-7")
    return Conversation(layer=session, ids=ids, fork=fork, community=community)


def agent_requests(*, workspace: Workspace, chat: LocomoChat, count: int = 45, token_budget: int = 1000) -> list[str]:
    """`count` context requests on the chat, one per question of the set, as an agent's would be."""
    from apps.assembly.params import ContextParams
    from apps.assembly.services import context_assemble

    return [
        context_assemble(
            workspace=workspace,
            params=ContextParams(layer_id=chat.layer.pk, query=question, token_budget=token_budget, timeout_ms=0),
        ).trace_id
        for question in list(chat.questions)[:count]
    ]
