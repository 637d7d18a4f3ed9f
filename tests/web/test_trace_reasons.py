"""The pages say every reason of the engine's vocabulary in words, and name what superseded an item."""

from __future__ import annotations

from apps.engine.types import Reason
from apps.web.selectors.candidates import REASONS, reason_text


def test_every_reason_of_the_engine_has_its_words() -> None:
    assert set(REASONS) == {str(reason) for reason in Reason}


def test_a_superseded_candidate_names_the_item_that_replaced_it() -> None:
    assert reason_text("superseded", 42) == "superseded by #42"
    assert reason_text("over_budget") == "did not fit the token budget"
    assert reason_text("something_new") == "something new"
