"""Automatic importance of messages: decisions matter most.

A message that states a decision ("we decided", "Decision:", "let's go with", "agreed") is
raised to DECISION_IMPORTANCE when it is written; a user marks any message with
USER_IMPORTANCE through the API. Both only ever raise importance, and the reason is kept in
`metadata["importance_source"]` so a later edit or an export knows where it came from.
"""

from __future__ import annotations

import re

DECISION_IMPORTANCE = 0.9
USER_IMPORTANCE = 1.0

_DECISION = re.compile(
    r"""
    \bdecision\s*[:\-\u2013]            # "Decision: ..."
    | \bwe\s+(?:have\s+)?decided\b | \b(?:i|we)\s+(?:will|'ll)\s+go\s+with\b
    | \blet'?s\s+go\s+with\b | \b(?:it'?s|that'?s)\s+(?:decided|settled|agreed)\b
    | \bwe\s+(?:have\s+)?agreed\b | \bagreed\s*[:\-\u2013] | \bfinal\s+decision\b
    | \bwe(?:'ll|\s+will)\s+use\b | \bdecided\s+to\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def is_decision(text: str) -> bool:
    """Whether a message states a decision (a cheap pattern: runs on every message write)."""
    return bool(_DECISION.search(text))


def automatic_importance(*, content: str, title: str, importance: float) -> tuple[float, str]:
    """The importance a new message gets and why: ("decision") raised, or ("") unchanged."""
    if is_decision(f"{title}\n{content}") and importance < DECISION_IMPORTANCE:
        return DECISION_IMPORTANCE, "decision"
    return importance, ""
