"""The experiments page's chart: each profile's recall run after run, so a change shows over time."""

from __future__ import annotations

from collections import Counter

from apps.experiments.models import ExperimentRun
from apps.web.charts import Chart, Series

CHART_PROFILES = 6  # the profiles run most often get a line each
DEFAULTS = "defaults"


def profile_label(name: str) -> str:
    return name or DEFAULTS


def recall_chart(*, runs: list[ExperimentRun]) -> Chart:
    """Finished runs oldest first; a line per profile (its mean recall in each run it took part in).

    `runs` carry `recall_a` and `recall_b` (experiments.selectors.runs_list)."""
    done = sorted((r for r in runs if r.state == ExperimentRun.State.DONE), key=lambda r: r.created_at)
    used = Counter(profile_label(p) for r in done for p in (r.profile_a, r.profile_b))
    names = [name for name, _count in used.most_common(CHART_PROFILES)]
    x: list[int] = []
    for run in done:  # strictly increasing, as uPlot needs: two runs in one second are a second apart
        second = int(run.created_at.timestamp())
        x.append(max(second, x[-1] + 1) if x else second)
    series = []
    for name in names:
        values: list[float | None] = []
        for run in done:
            figures = {profile_label(run.profile_a): run.recall_a, profile_label(run.profile_b): run.recall_b}  # type: ignore[attr-defined]
            value = figures.get(name)
            values.append(None if value is None else round(value, 3))
        series.append(Series(label=name, values=values))
    return Chart(
        id="experiments-recall",
        title="Recall per profile on this set, run after run",
        x=x,
        series=series,
        empty_text="No finished run yet: run a question set with two profiles and its recall shows here.",
    )
