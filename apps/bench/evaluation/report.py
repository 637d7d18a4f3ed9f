"""A run as tables (per budget, then per category) and as JSON, the same-run baselines beside every
figure of the service.

Recall is the mean over scored answers (questions with evidence) of the share of their evidence
found; "complete" is the share of scored answers with all of it found. Questions without evidence
are asked and counted, and left out of every recall figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean, quantiles
from typing import Any

from apps.bench.evaluation.ask import Answer, Run
from apps.bench.evaluation.baselines import BASELINES

METHODS = ("service", *BASELINES)
HEAD = (
    "budget", "service", "fusion", "Δ", "bm25", "dense", "recency", "complete", "complete_fusion", "tokens", "non-turn",
    "non-turn%", "over", "partial",
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    budget: int
    recall: dict[str, float]  # method → mean recall
    complete: dict[str, float]  # method → share of scored answers with all evidence found
    by_category: dict[str, dict[str, float]]  # category → method → mean recall
    over_budget: int
    non_turn_chunks: int
    non_turn_share: float  # the share of the service's context tokens in non-turn chunks
    partial: int
    mean_tokens: float


def _mean(values: list[float | None]) -> float:
    present = [v for v in values if v is not None]
    return fmean(present) if present else float("nan")


def rows(run: Run) -> list[Row]:
    out = []
    for budget in run.budgets:
        at = [a for a in run.answers if a.budget == budget]
        scored = [a for a in at if a.question.evidence]
        out.append(
            Row(
                budget=budget,
                recall={m: _mean([a.recall[m] for a in scored]) for m in METHODS},
                complete={m: _mean([1.0 if a.recall[m] == 1.0 else 0.0 for a in scored]) for m in METHODS},
                by_category={
                    c: {m: _mean([a.recall[m] for a in scored if a.question.category == c]) for m in METHODS}
                    for c in run.dataset.categories
                },
                over_budget=sum(a.over_budget for a in at),
                non_turn_chunks=sum(a.non_turn_chunks for a in at),
                non_turn_share=sum(a.non_turn_tokens for a in at) / max(sum(a.tokens for a in at), 1),
                partial=sum(a.partial for a in at),
                mean_tokens=_mean([float(a.tokens) for a in at]),
            )
        )
    return out


def _questions(run: Run) -> dict[str, Answer]:
    return {a.question.id: a for a in run.answers}


def _latency(answers: tuple[Answer, ...]) -> tuple[float, float]:
    times = sorted(a.elapsed_ms for a in answers)
    if len(times) < 2:
        return (times[0], times[0]) if times else (0.0, 0.0)
    cuts = quantiles(times, n=100)
    return cuts[49], cuts[94]


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    return ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in [head, *body]]


def _pair(recall: dict[str, float]) -> str:
    return f"{recall['service']:.3f}/{recall['fusion']:.3f} ({recall['service'] - recall['fusion']:+.3f})"


def _heading(run: Run) -> str:
    questions = _questions(run).values()
    scored = sum(1 for a in questions if a.question.evidence)
    data = run.dataset
    notes = [f"{len(questions) - scored} without evidence, asked and not scored"] if len(questions) > scored else []
    notes += [f"{data.skipped_questions} in the file not scored"] if data.skipped_questions else []
    return (
        f"evidence recall on {data.title}: {len(data.conversations)} conversations, {len(data.turns)} turns, "
        f"{scored} scored questions{''.join(f' ({n})' for n in notes)}; sha256 {data.sha256[:12]}; "
        f"scope {run.scope}; workspace {run.workspace_slug}"
    )


def report_lines(run: Run, *, misses: bool = False) -> list[str]:
    """The two tables, a legend, optional per-answer misses, warnings, and a one-line summary last."""
    table = rows(run)
    scored = [a for a in _questions(run).values() if a.question.evidence]
    counts = {c: sum(1 for a in scored if a.question.category == c) for c in run.dataset.categories}
    model = run.dataset.model or "the default model"
    lines = [_heading(run), ""]
    lines += _table(
        list(HEAD),
        [
            [
                str(r.budget),
                f"{r.recall['service']:.3f}",
                f"{r.recall['fusion']:.3f}",
                f"{r.recall['service'] - r.recall['fusion']:+.3f}",
                f"{r.recall['bm25']:.3f}",
                f"{r.recall['dense']:.3f}",
                f"{r.recall['recency']:.3f}",
                f"{r.complete['service']:.3f}",
                f"{r.complete['fusion']:.3f}",
                f"{r.mean_tokens:.0f}",
                str(r.non_turn_chunks),
                f"{100 * r.non_turn_share:.1f}",
                str(r.over_budget),
                str(r.partial),
            ]
            for r in table
        ],
    )
    lines += ["", "by category, service / same-run fusion (Δ):"]
    lines += _table(
        ["budget", *[f"{c}({counts[c]})" for c in run.dataset.categories]],
        [
            [str(r.budget), *[_pair(r.by_category[c]) if counts[c] else "-" for c in run.dataset.categories]]
            for r in table
        ],
    )
    lines += [
        "",
        f"service: context_assemble ({model}, format {run.dataset.format or 'default'}) at the question's "
        f"{'conversation' if run.scope == 'conversation' else 'company layer'}, scored by {run.dataset.scoring} "
        "(evidence found; over budget scores 0); fusion: RRF (k=60) of bm25 and dense, each turn packed whole "
        "best-first; recency: the newest turns that fit; complete: questions with all evidence found (service, "
        "fusion); tokens: mean tokens of the service's context; non-turn: chunks that are no turn in scope; "
        "non-turn%: their share of the service's context tokens; over: "
        f"answers above the budget; partial: answers that passed their {run.timeout_ms} ms deadline (timeout_ms) "
        "and lack a stage",
    ]
    if misses:
        lines += [
            f"missed at {a.budget}: {a.question.id} ({a.question.category}) {', '.join(a.missed)}"
            for a in run.answers
            if a.missed
        ]
    lines += [f"engine warning: {w}" for w in run.warnings]
    p50, p95 = _latency(run.answers)
    lines.append(
        "summary: service "
        + " ".join(f"{r.recall['service']:.3f}@{r.budget}" for r in table)
        + "".join(f" | {m} " + " ".join(f"{r.recall[m]:.3f}" for r in table) for m in BASELINES)
        + f" | over budget {sum(r.over_budget for r in table)}, partial {sum(r.partial for r in table)}"
        + f" (deadline {run.timeout_ms} ms) | service p50 {p50:.0f} ms p95 {p95:.0f} ms"
        + f" | load {run.load_seconds:.0f} s, questions {run.run_seconds:.0f} s"
    )
    return lines


def _rounded(values: dict[str, float]) -> dict[str, float | None]:
    return {m: None if math.isnan(v) else round(v, 4) for m, v in values.items()}


def report_json(run: Run, *, details: bool = False) -> dict[str, Any]:
    p50, p95 = _latency(run.answers)
    questions = _questions(run).values()
    out: dict[str, Any] = {
        "dataset": {
            "name": run.dataset.name,
            "sha256": run.dataset.sha256,
            "conversations": len(run.dataset.conversations),
            "turns": len(run.dataset.turns),
            "questions": sum(1 for a in questions if a.question.evidence),
            "unscored_questions": sum(1 for a in questions if not a.question.evidence),
        },
        "scope": run.scope,
        "workspace": run.workspace_slug,
        "budgets": [
            {
                "budget": r.budget,
                "recall": _rounded(r.recall),
                "complete": _rounded(r.complete),
                "by_category": {c: _rounded(ms) for c, ms in r.by_category.items() if not math.isnan(ms["service"])},
                "over_budget": r.over_budget,
                "non_turn_chunks": r.non_turn_chunks,
                "non_turn_token_share": round(r.non_turn_share, 4),
                "partial": r.partial,
                "mean_tokens": round(r.mean_tokens, 1),
            }
            for r in rows(run)
        ],
        "latency_ms": {"p50": round(p50, 1), "p95": round(p95, 1)},
        "timeout_ms": run.timeout_ms,
        "warnings": list(run.warnings),
    }
    if details:
        out["answers"] = [
            {
                "question": a.question.id,
                "category": a.question.category,
                "text": a.question.question,
                "budget": a.budget,
                "recall": {m: None if v is None else round(v, 4) for m, v in a.recall.items()},
                "evidence": list(a.question.evidence),
                "missed": list(a.missed),
                "selected": list(a.selected),
                "tokens": a.tokens,
            }
            for a in run.answers
        ]
    return out
