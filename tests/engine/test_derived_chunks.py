"""Summaries and communities earn their tokens: a community stands in for a far turn only once it is
in the context, and a summary never repeats a sentence the context already holds."""

from __future__ import annotations

from apps.engine import Candidate, Rung, Scored, assemble
from tests.engine.candidates import NOW, cand, o200k

FAR = "Billing step 3: the export job writes a CSV of every open invoice."


def community(text: str, members: tuple[int, ...]) -> Candidate:
    return cand(
        90, text, source="community", kind="community", type="", stands_in_for=members, rungs=(Rung("summary", text),)
    )


def packed(candidates: list[Candidate], budget: int) -> tuple[list[tuple[str, int]], dict[int, str]]:
    result = assemble(
        [Scored(c, 1.0 - i / 100) for i, c in enumerate(candidates)], budget=budget, fmt="text", count=o200k
    )
    return [(c.source, c.id) for c in result.chunks], {e.id: e.reason for e in result.trace}


def test_a_community_in_the_context_stands_in_for_the_far_turns_ranked_after_it() -> None:
    member = cand(1, FAR, kind="message", type="", role="user", distance=30)
    chunks, reasons = packed([community("The billing export runs nightly.", (1,)), member], budget=400)
    assert chunks == [("community", 90)] and reasons[1] == "in_community"


def test_a_community_left_out_stands_in_for_nothing() -> None:
    member = cand(1, FAR, kind="message", type="", role="user", distance=30)
    big = community(
        "The billing export runs nightly" + " and writes invoices" * 80 + ".", (1,)
    )  # no sentence to cut at
    chunks, _ = packed([big, cand(2, "A fact that fills the room.", created_at=NOW), member], budget=60)
    assert ("item", 1) in chunks and ("community", 90) not in chunks


def test_a_summary_leaves_out_the_sentences_already_in_the_context() -> None:
    turn = cand(1, FAR, kind="message", type="", role="user")
    summary = cand(
        80,
        "",
        source="summary",
        kind="summary",
        type="",
        rungs=(Rung("detailed", f"{FAR} Refunds go out on Fridays."),),
    )
    result = assemble([Scored(turn, 0.9), Scored(summary, 0.5)], budget=400, fmt="text", count=o200k)
    texts = {c.source: c.text for c in result.chunks}
    assert texts["summary"] == "Refunds go out on Fridays."
    alone = assemble(
        [
            Scored(turn, 0.9),
            Scored(cand(81, "", source="summary", kind="summary", type="", rungs=(Rung("detailed", FAR),)), 0.5),
        ],
        budget=400,
        fmt="text",
        count=o200k,
    )
    assert [c.source for c in alone.chunks] == ["item"]
    assert {e.id: e.reason for e in alone.trace}[81] == "duplicate_text"
