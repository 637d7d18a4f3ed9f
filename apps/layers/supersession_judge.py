"""The hook through which a higher app judges supersession candidates (layers imports none of them).

The detector (`supersession.proposals_detect`) asks the registered judge, when there is one, about each
newly embedded item and its older neighbours: summaries registers its LLM judge in `AppConfig.ready`
(apps/summaries/supersession_judge.py), which answers None while no LLM is configured. A judge that
fails (the LLM down, a reply it cannot read, the day's budget spent) raises `JudgeFailed` with the
reason, and the rule-based detector decides instead, saying why in each proposal's reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Statement:
    """An item as a judge reads it."""

    id: int
    kind: str
    type: str
    title: str
    content: str
    created_at: datetime


@dataclass(frozen=True)
class Candidate:
    statement: Statement
    similarity: float


@dataclass(frozen=True)
class Question:
    """Does `new` supersede any of `candidates` (older items of its layer, kind and type, nearest first)?"""

    workspace_id: int
    new: Statement
    candidates: tuple[Candidate, ...]


@dataclass(frozen=True)
class Verdict:
    old_id: int  # one of the question's candidates
    reason: str


@dataclass(frozen=True)
class Judgement:
    """The candidates the newer item supersedes (none: it replaces nothing), and who judged."""

    detector: str
    verdicts: tuple[Verdict, ...]


class JudgeFailed(Exception):
    """The judge could not answer; `reason` says why, in words a proposal's reader understands."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


Judge = Callable[[Question], Judgement | None]  # None: not configured, the rules decide

_judges: list[Judge] = []


def judge_register(judge: Judge) -> None:
    """Make `judge` the one the detector asks (from a higher app's `AppConfig.ready`; the last one wins)."""
    _judges[:] = [judge]


def judge_current() -> Judge | None:
    return _judges[0] if _judges else None
