"""The LoCoMo run as tables (per budget, then per category) and as JSON, the same-run baselines
beside every figure of the service."""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import fmean, quantiles
from typing import Any

from apps.assembly.evaluation.locomo.data import CATEGORIES
from apps.assembly.evaluation.locomo.run import BASELINES, Answer, LocomoRun

METHODS = ("service", *BASELINES)


@dataclass(frozen=True)
class Row:
    budget: int
    recall: dict[str, float]  # method → mean recall
    complete: dict[str, float]  # method → share of questions with all evidence selected
    by_category: dict[str, dict[str, float]]  # category name → method → mean recall
    over_budget: int
    non_turn_chunks: int
    partial: int
    mean_tokens: float


def _mean(values: list[float]) -> float:
    return fmean(values) if values else float("nan")


def rows(run: LocomoRun) -> list[Row]:
    out = []
    for budget in run.budgets:
        at = [a for a in run.answers if a.budget == budget]
        out.append(
            Row(
                budget=budget,
                recall={m: _mean([a.recall[m] for a in at]) for m in METHODS},
                complete={m: _mean([1.0 if a.recall[m] == 1.0 else 0.0 for a in at]) for m in METHODS},
                by_category={
                    name: {m: _mean([a.recall[m] for a in at if a.question.category == c]) for m in METHODS}
                    for c, name in CATEGORIES.items()
                },
                over_budget=sum(a.over_budget for a in at),
                non_turn_chunks=sum(a.non_turn_chunks for a in at),
                partial=sum(a.partial for a in at),
                mean_tokens=_mean([float(a.tokens) for a in at]),
            )
        )
    return out


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


def report_lines(run: LocomoRun) -> list[str]:
    table = rows(run)
    questions = {a.question.id: a.question for a in run.answers}
    counts = {name: sum(1 for q in questions.values() if q.category == c) for c, name in CATEGORIES.items()}
    p50, p95 = _latency(run.answers)
    lines = [
        f"LoCoMo evidence recall: {len(run.dataset.samples)} samples, {run.dataset.turn_count} turns, "
        f"{len(questions)} scored questions (sha256 {run.dataset.sha256[:12]}), workspace {run.workspace_slug}",
        "",
    ]
    lines += _table(
        [
            "budget",
            "service",
            "fusion",
            "Δ",
            "bm25",
            "dense",
            "complete",
            "fusion",
            "tokens",
            "non-turn",
            "over",
            "partial",
        ],
        [
            [
                str(r.budget),
                f"{r.recall['service']:.3f}",
                f"{r.recall['fusion']:.3f}",
                f"{r.recall['service'] - r.recall['fusion']:+.3f}",
                f"{r.recall['bm25']:.3f}",
                f"{r.recall['dense']:.3f}",
                f"{r.complete['service']:.3f}",
                f"{r.complete['fusion']:.3f}",
                f"{r.mean_tokens:.0f}",
                str(r.non_turn_chunks),
                str(r.over_budget),
                str(r.partial),
            ]
            for r in table
        ],
    )
    lines += ["", "by category, service / same-run fusion (Δ):"]
    lines += _table(
        ["budget", *[f"{name}({counts[name]})" for name in CATEGORIES.values()]],
        [
            [
                str(r.budget),
                *[_pair(r.by_category[n]) if counts[n] else "-" for n in CATEGORIES.values()],
            ]
            for r in table
        ],
    )
    lines += [
        "",
        "service: context_assemble at the sample's multi_session layer (model gpt-4, format text); fusion: RRF "
        "(k=60) of bm25 and dense, each turn packed whole best-first; complete: questions with all evidence "
        "selected (service, fusion); tokens: mean cl100k tokens of the service's context; non-turn: chunks "
        "that are no turn of the sample; over: answers above the budget (scored 0); partial: answers that "
        f"passed their {run.timeout_ms} ms deadline (timeout_ms) and lack a stage",
    ]
    lines += [f"engine warning: {w}" for w in run.warnings]
    partial = sum(r.partial for r in table)
    lines.append(
        "summary: service "
        + " ".join(f"{r.recall['service']:.3f}@{r.budget}" for r in table)
        + " | fusion "
        + " ".join(f"{r.recall['fusion']:.3f}" for r in table)
        + " | bm25 "
        + " ".join(f"{r.recall['bm25']:.3f}" for r in table)
        + f" | over budget {sum(r.over_budget for r in table)}, partial {partial} (deadline {run.timeout_ms} ms)"
        + f" | service p50 {p50:.0f} ms p95 {p95:.0f} ms | load {run.load_seconds:.0f} s, questions "
        f"{run.run_seconds:.0f} s"
    )
    return lines


def report_json(run: LocomoRun, *, details: bool = False) -> dict[str, Any]:
    p50, p95 = _latency(run.answers)
    out: dict[str, Any] = {
        "dataset": {
            "sha256": run.dataset.sha256,
            "samples": len(run.dataset.samples),
            "turns": run.dataset.turn_count,
            "questions": len({a.question.id for a in run.answers}),
        },
        "workspace": run.workspace_slug,
        "budgets": [
            {
                "budget": r.budget,
                "recall": {m: round(v, 4) for m, v in r.recall.items()},
                "complete": {m: round(v, 4) for m, v in r.complete.items()},
                "by_category": {
                    n: {m: round(v, 4) for m, v in ms.items()}
                    for n, ms in r.by_category.items()
                    if not math.isnan(ms["service"])
                },
                "over_budget": r.over_budget,
                "non_turn_chunks": r.non_turn_chunks,
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
                "category": a.question.category_name,
                "text": a.question.question,
                "budget": a.budget,
                "recall": {m: round(v, 4) for m, v in a.recall.items()},
                "evidence": sorted(a.question.evidence),
                "missed": list(a.missed),
                "selected": list(a.selected),
                "tokens": a.tokens,
            }
            for a in run.answers
        ]
    return out
