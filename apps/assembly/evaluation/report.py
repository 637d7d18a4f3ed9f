"""Aggregating an evaluation run by budget and printing it as a table.

Recall is the mean over answerable questions of the fraction of their evidence turns found;
"complete" is the share of answerable questions with every evidence turn found. Adversarial
questions have no evidence: they are counted, asked, and left out of every recall figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean

from apps.assembly.evaluation.dataset import ADVERSARIAL, QUESTION_TYPES
from apps.assembly.evaluation.runner import EvalRun, QuestionResult

ANSWERABLE_TYPES = tuple(t for t in QUESTION_TYPES if t != ADVERSARIAL)


@dataclass(frozen=True)
class BudgetRow:
    budget: int
    recall: float
    complete: float
    by_type: dict[str, float]
    recency: float
    fused: float
    mean_tokens: float
    over_budget: int


def _mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return fmean(present) if present else float("nan")


def budget_rows(run: EvalRun) -> list[BudgetRow]:
    rows = []
    for budget in run.budgets:
        at = [r for r in run.results if r.budget == budget]
        answerable = [r for r in at if r.recall is not None]
        rows.append(
            BudgetRow(
                budget=budget,
                recall=_mean([r.recall for r in answerable]),
                complete=_mean([1.0 if r.recall == 1.0 else 0.0 for r in answerable]),
                by_type={t: _mean([r.recall for r in answerable if r.type == t]) for t in ANSWERABLE_TYPES},
                recency=_mean([r.recency for r in answerable]),
                fused=_mean([r.fused for r in answerable]),
                mean_tokens=fmean(r.tokens for r in at) if at else 0.0,
                over_budget=sum(1 for r in at if r.tokens > budget),
            )
        )
    return rows


def _questions(run: EvalRun) -> list[QuestionResult]:
    return [r for r in run.results if r.budget == run.budgets[0]] if run.budgets else []


def report_lines(run: EvalRun, *, misses: bool = False) -> list[str]:
    """The table, a legend, optional per-question misses, and a one-line summary last."""
    rows = budget_rows(run)
    questions = _questions(run)
    counts = {t: sum(1 for q in questions if q.type == t) for t in QUESTION_TYPES}
    answerable = sum(n for t, n in counts.items() if t != ADVERSARIAL)
    types = [t for t in ANSWERABLE_TYPES if counts[t]]
    head = ["budget", "recall", "complete", *[f"{t}({counts[t]})" for t in types], "recency", "fused", "tokens"]
    widths = [max(len(h), 6) for h in head]
    lines = [
        f"evidence recall on {run.conversations} conversations, {run.turns} turns, {answerable} answerable "
        f"questions ({counts[ADVERSARIAL]} adversarial, without evidence, excluded from recall); scope: {run.scope}",
        "  ".join(h.rjust(w) for h, w in zip(head, widths, strict=True)),
    ]
    for row in rows:
        cells = [
            str(row.budget),
            f"{row.recall:.3f}",
            f"{row.complete:.3f}",
            *[f"{row.by_type[t]:.3f}" for t in types],
            f"{row.recency:.3f}",
            f"{row.fused:.3f}",
            f"{row.mean_tokens:.0f}",
        ]
        lines.append("  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)))
    lines.append(
        "recall: engine (context_assemble), mean share of evidence turns found; complete: questions with all "
        "evidence found; recency: newest turns that fit; fused: plain keyword+vector RRF packed whole; "
        "tokens: mean tokens of the engine's context"
    )
    if misses:
        for r in run.results:
            if r.missed:
                lines.append(f"missed at {r.budget}: {r.question_id} ({r.type}) {', '.join(r.missed)}")
    for warning in run.warnings:
        lines.append(f"engine warning: {warning}")
    over = sum(row.over_budget for row in rows)
    lines.append(
        "summary: recall "
        + " ".join(f"{row.recall:.3f}@{row.budget}" for row in rows)
        + " | recency "
        + " ".join(f"{row.recency:.3f}" for row in rows)
        + " | fused "
        + " ".join(f"{row.fused:.3f}" for row in rows)
        + f" | over budget: {over} | load {run.load_seconds:.1f}s, questions {run.run_seconds:.1f}s"
    )
    return lines
