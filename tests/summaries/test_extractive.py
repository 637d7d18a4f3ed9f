"""The extractive summarizer: central, non-redundant, in source order, exact and full, deterministic."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.tokenizer import count_tokens
from apps.summaries.extractive import extractive_summary, split_sentences
from apps.summaries.truncation import truncate_at_sentence
from tests.summaries.helpers import TEAM_FACTS

ENC = "o200k_base"  # the encoding of DEFAULT_MODEL (gpt-4o)

DOCS = [
    "The retry worker overloaded Stripe because it retried without jitter. We added exponential backoff with jitter. "
    "The payments team owns the retry worker.",
    "Database backups are kept for 35 days. Backups run nightly at 02:00 UTC.",
    "- Deploys happen on Tuesdays\n- Deploys need two approvals",
    "The retry worker overloaded Stripe because it retried without jitter.",
]


def test_it_returns_nothing_for_no_text_or_no_room() -> None:
    assert extractive_summary([], 50) == "" and extractive_summary(["", "  \n"], 50) == ""
    assert extractive_summary(DOCS, 0) == ""


def test_it_never_exceeds_and_nearly_fills_the_target() -> None:
    long = [f"{fact} It was confirmed in review number {i}." for i, fact in enumerate(TEAM_FACTS * 8)]
    for target in (5, 13, 50, 120, 200, 333, 500):
        used = count_tokens(extractive_summary(long, target), ENC)
        assert target - 4 <= used <= target, (target, used)


def test_a_short_source_is_kept_whole_once_in_source_order() -> None:
    summary = extractive_summary(DOCS, 500)
    assert summary.count("overloaded Stripe") == 1  # the repeated sentence appears once
    assert summary.index("overloaded Stripe") < summary.index("Backups run") < summary.index("two approvals")
    assert "Deploys happen on Tuesdays." in summary  # list lines become sentences


def test_a_small_target_takes_the_most_central_sentence() -> None:
    texts = [
        "The retry worker retries failed charges with backoff.",
        "The retry worker failed charges during the Stripe outage.",
        "Lunch is served at noon on Fridays.",
        "Failed charges are retried by the retry worker after a delay.",
    ]
    assert "Lunch" not in extractive_summary(texts, 14)


def test_near_duplicates_are_not_picked_twice() -> None:
    texts = [
        "The charge service retries failed charges three times.",
        "The charge service retries the failed charges three times.",
        "Backups are kept for 35 days in eu-west-1.",
    ]
    summary = extractive_summary(texts, 200)
    assert summary.count("retries") == 1 and "Backups" in summary


def test_a_focus_pulls_the_summary_toward_a_readers_concern() -> None:
    plain = extractive_summary(TEAM_FACTS, 20)
    focused = extractive_summary(TEAM_FACTS, 20, focus=["Do card numbers ever reach the logs?"])
    assert "Card numbers" in focused and focused != plain


def test_sentences_split_on_punctuation_and_lines_and_keep_closing_quotes() -> None:
    assert split_sentences('He said "stop." Then left.\n- a list item\n2. numbered') == [
        'He said "stop."',
        "Then left.",
        "a list item.",
        "numbered.",
    ]


def test_truncation_keeps_leading_whole_sentences() -> None:
    cut = truncate_at_sentence(DOCS, 30)
    assert cut == DOCS[0] and count_tokens(cut, ENC) <= 30
    assert truncate_at_sentence(["word " * 200], 10).endswith("…")


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=12)
paragraph = st.lists(st.lists(words, min_size=1, max_size=25).map(" ".join), min_size=1, max_size=8).map(". ".join)


@PROPERTY
@given(texts=st.lists(paragraph, max_size=6), target=st.integers(min_value=1, max_value=500))
def test_property_exact_bound_and_determinism(texts: list[str], target: int) -> None:
    summary = extractive_summary(texts, target)
    assert count_tokens(summary, ENC) <= target
    assert summary == extractive_summary(list(texts), target)
    if any(t.strip() for t in texts):
        assert summary  # some text always fits one token or more


def test_a_title_is_the_informative_sentence_not_the_chatter_that_fits_whole() -> None:
    from apps.summaries.extractive import extractive_title

    chat = [
        "Hey Sam! Pretty good, thanks.",
        "Good good. Hey, what happened with your old car?",
        "The mechanic said the transmission of my old Honda Civic is finished after 200,000 miles.",
        "Haha awesome. Talk soon!",
        "Thanks Sam, see you!",
    ]
    title = extractive_title(chat, 20)
    assert title.startswith("The mechanic said the transmission of my old Honda Civic")
    assert extractive_title(chat, 8).endswith("…") and extractive_title([], 20) == ""
