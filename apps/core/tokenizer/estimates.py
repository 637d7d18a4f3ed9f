"""Calibrated estimates for models whose tokenizer is not published (Claude, Gemini, newer Mistral).

Such a model is counted in its catalogue encoding (the base count) and scaled by its family's
ratio; the margin is the share of a budget to keep free so that at least 99% of prompts fit.
Until a workspace has `MIN_CALLS` observations of a family (our count beside the count the
upstream reported), the starting values below apply; then the ratio is the median of the
observed reported/base ratios and the margin the 99th percentile over that median, minus one.

Starting values, measured on a public text sample: the Django 5.2.19 wheel (a dependency, so
every machine has it): the `msgstr` texts of django/contrib/admin/locale/{de,fr,es,ru,zh_Hans,
ja,ar,hi,ko,pt_BR,pl,tr}/LC_MESSAGES/django.po and six source files (db/models/query.py,
http/request.py, utils/text.py, template/base.py, core/handlers/base.py, forms/forms.py), cut
into 4,000-character pieces (71), each counted in o200k_base and in the reference tokenizer:
- claude: Anthropic's own published tokenizer (tokenizer.json of the `anthropic` SDK 0.38.0,
  SHA-256 c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767; it is the Claude 1/2
  vocabulary, the only one Anthropic published): median 1.11 x o200k_base (code 1.10, the
  translations 1.46), 99th percentile 2.81, so a starting margin of 2.81 / 1.11 - 1 = 1.53.
- gemini: Google publishes no tokenizer in a package (its SDK's local tokenizer downloads one at
  run time), so nothing was measured: ratio 1.0 and the same starting margin as Claude's.
- mistral (Tekken v7 and later, counted with tekken_240718): the same vocabulary family, so
  ratio 1.0 and a small starting margin, 0.05.
- unknown: a model outside the catalogue, counted with cl100k_base: ratio 1.0, margin 0.5.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MIN_CALLS = 30  # observations of a family in a workspace before they replace the starting values
WINDOW_CALLS = 1_000  # the most recent observations that calibrate


@dataclass(frozen=True)
class Estimate:
    """How an estimated family's base count becomes tokens, and the margin that makes 99% fit."""

    ratio: float
    margin: float
    calls: int = 0  # the observations it rests on (0: the starting values)


STARTING: dict[str, Estimate] = {
    "claude": Estimate(ratio=1.11, margin=1.53),
    "gemini": Estimate(ratio=1.0, margin=1.53),
    "mistral": Estimate(ratio=1.0, margin=0.05),
    "unknown": Estimate(ratio=1.0, margin=0.5),
}
EXACT = Estimate(ratio=1.0, margin=0.0)


def quantile(values: Sequence[float], q: float) -> float:
    """The `q` quantile of sorted `values` (nearest rank: the smallest value with at least q of them at or below)."""
    return values[max(0, min(len(values) - 1, math.ceil(q * len(values)) - 1))]


def calibrate(family: str, ratios: Sequence[float]) -> Estimate:
    """The estimate from observed reported/base ratios (any order); the starting one below MIN_CALLS."""
    start = STARTING.get(family, STARTING["unknown"])
    if len(ratios) < MIN_CALLS:
        return start
    ordered = sorted(ratios)
    median = quantile(ordered, 0.5)
    if median <= 0:
        return start
    return Estimate(ratio=median, margin=max(0.0, quantile(ordered, 0.99) / median - 1), calls=len(ordered))


def scaled(base: int, estimate: Estimate) -> int:
    """The estimated token count of a text whose base count is `base`."""
    return math.ceil(base * estimate.ratio - 1e-9)


def within_margin(budget: int, estimate: Estimate) -> int:
    """The part of `budget` an estimated count may fill so that 99% of real counts stay within it."""
    return math.floor(budget / (1 + estimate.margin))
