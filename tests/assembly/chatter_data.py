"""A two-person chat shaped like real use: greetings, short replies, typos and topic jumps over weeks,
no speaker names in the text, with the two turns that answer a question buried among them (what
issue 20 met: "Hey Evan, what's up?" ranked above the turns about Evan's car)."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.support.api import bulk, layer
from tests.support.tenants import Tenant

SAM, EVAN = "user", "assistant"  # the roles the two speakers write as
ANSWERS = (
    (EVAN, "finally picked up my car from the shop, the old Prius needed new brakes"),
    (EVAN, "yeah the prius gets like 50 mpg, cheapest car i've ever owned"),
)
GREETING = (EVAN, "yep whats up")

_GREETINGS = (
    (SAM, "Hey Evan, what's up? What happened? Let me know."),
    (EVAN, "hey! not much, u?"),
    (SAM, "hiii how's it going"),
    (EVAN, "good good, long day tho"),
    (SAM, "morning!! you around?"),
    GREETING,
    (SAM, "lol"),
    (EVAN, "haha yes"),
    (SAM, "ok sure"),
    (EVAN, "sounds good"),
    (SAM, "thanks man"),
    (EVAN, "np!"),
    (SAM, "talk later?"),
    (EVAN, "for sure, ttyl"),
    (SAM, "good night!"),
    (EVAN, "night"),
)
_TOPICS = (
    (
        (SAM, "started a pottery class on tuesdays, my first bowl looks like a hat"),
        (EVAN, "lol pics or it didnt happen"),
        (SAM, "the teacher says centering the clay is the hardest part"),
        (EVAN, "you'll get it, took me ages to learn guitar"),
    ),
    (
        (EVAN, "work is crazy this week, the quarterly report is due friday"),
        (SAM, "ugh deadlines. is your manager still micromanaging?"),
        (EVAN, "less now, she's on vacation in portugal"),
        (SAM, "enjoy the quiet while it lasts"),
    ),
    (
        (SAM, "we're thinking of adopting a cat from the shelter"),
        (EVAN, "omg do it, cats are the best"),
        (SAM, "my partner wants a grey one, i want a ginger one"),
        (EVAN, "get both lol"),
    ),
    (
        (EVAN, "went hiking up mount tam on sunday, the fog was unreal"),
        (SAM, "that trail is brutal, how long did it take?"),
        (EVAN, "about four hours with a lunch stop"),
        (SAM, "next time invite me!"),
    ),
    (
        (SAM, "i'm trying to cook more, made a lasagna from scratch last night"),
        (EVAN, "recipe plz"),
        (SAM, "it's my grandma's, the secret is nutmeg in the bechamel"),
        (EVAN, "nutmeg?? wild"),
    ),
    (
        (EVAN, "my sister is visiting next month, she's bringing the kids"),
        (SAM, "how old are they now?"),
        (EVAN, "6 and 9, they're obsessed with dinosaurs"),
        (SAM, "take them to the natural history museum"),
    ),
)


def chat_turns(weeks: int = 5) -> list[tuple[str, str]]:
    """The chat as (role, text) in order: each week some greetings, the topics in turn with a short
    reply after each, and one answer turn in weeks 2 and 4."""
    turns: list[tuple[str, str]] = []
    for week in range(weeks):
        turns += _GREETINGS[week % 4 * 4 : week % 4 * 4 + 4]
        for topic in _TOPICS[week % 3 :] + _TOPICS[: week % 3]:
            turns += topic
            turns += _GREETINGS[4 + (week + len(turns)) % 12 : 5 + (week + len(turns)) % 12]
        if week in (1, 3):
            turns.append(ANSWERS[week // 2])
    return turns


def chat_conversation(t: Tenant, turns: list[tuple[str, str]], *, name: str, start: datetime) -> int:
    """`turns` as a client writes them: one session ("March") of a conversation layer named `name`, each
    turn a message an hour after the one before (external ids turn-0, turn-1, ...); the conversation's id."""
    conversation = layer(t, "multi_session", t.root.pk, name=name)
    session = layer(t, "session", conversation, name="March")
    bulk(
        t,
        session,
        [
            {
                "kind": "message",
                "role": role,
                "content": text,
                "external_id": f"turn-{n}",
                "created_at": (start + timedelta(hours=n)).isoformat(),
            }
            for n, (role, text) in enumerate(turns)
        ],
    )
    return conversation
