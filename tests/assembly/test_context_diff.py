"""The one comparison of two contexts (console replay, profile pages): added, removed, kept, tokens."""

from __future__ import annotations

from typing import Any

from apps.assembly.context_diff import context_diff, included_keys


def entry(source: str, id: int, decision: str = "included") -> dict[str, Any]:
    return {"source": source, "id": id, "decision": decision}


def test_it_names_the_chunks_added_and_removed_in_packing_order() -> None:
    before = [entry("item", 1), entry("item", 2), entry("summary", 7), entry("item", 3, "excluded")]
    after = [entry("item", 3), entry("item", 1), entry("item", 4, "truncated"), entry("item", 2, "excluded")]
    diff = context_diff(before=before, after=after, tokens_before=120, tokens_after=95)
    assert diff.added == (("item", 3), ("item", 4))
    assert diff.removed == (("item", 2), ("summary", 7))
    assert diff.kept == 1
    assert diff.token_difference == -25 and not diff.unchanged


def test_it_keeps_an_item_and_a_summary_with_the_same_id_apart() -> None:
    diff = context_diff(before=[entry("item", 5)], after=[entry("summary", 5)], tokens_before=10, tokens_after=10)
    assert diff.added == (("summary", 5),) and diff.removed == (("item", 5),) and diff.kept == 0


def test_the_same_context_is_unchanged() -> None:
    trace = [entry("item", 1), entry("error_hint", 2), entry("item", 9, "excluded")]
    diff = context_diff(before=trace, after=list(reversed(trace)), tokens_before=50, tokens_after=50)
    assert diff.unchanged and diff.kept == 2


def test_a_duplicate_entry_counts_once() -> None:
    assert included_keys([entry("item", 1), entry("item", 1, "truncated"), entry("item", 2, "excluded")]) == [
        ("item", 1)
    ]
