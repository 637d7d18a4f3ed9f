"""Charts for the pages: the data of one chart, drawn by static/web/charts.js with the vendored uPlot.

A view builds a `Chart`; the template includes `web/partials/chart.html` with `chart=...`, which
writes a <figure> with a caption, the data as `json_script` (no inline code: the CSP forbids it)
and the same figures as a table in a <details> (readable without JavaScript and by screen readers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


@dataclass(frozen=True)
class Series:
    """One line (or one band of a stack): a label and a value per x (None: no data there)."""

    label: str
    values: Sequence[float | None]
    stacked: bool = False


@dataclass(frozen=True)
class Chart:
    """`x` is unix seconds (time charts) or 0..n-1 with `categories` (bar charts by category)."""

    id: str
    title: str
    x: list[int]
    series: list[Series]
    kind: str = "line"  # "line" or "bars"
    unit: str = ""
    categories: list[str] = field(default_factory=list)
    empty_text: str = "No data in this range yet."  # shown instead of an empty chart: say how to get data

    @cached_property
    def empty(self) -> bool:
        return not self.x or all(value in (None, 0) for series in self.series for value in series.values)

    def payload(self) -> dict[str, Any]:
        """What charts.js reads."""
        return {
            "kind": self.kind,
            "unit": self.unit,
            "x": self.x,
            "categories": self.categories,
            "series": [{"label": s.label, "values": s.values, "stacked": s.stacked} for s in self.series],
        }

    def table_rows_html(self) -> SafeString:
        """The <tr>s of the figures table, built here: a template loop over every cell of nine
        charts costs more than the dashboard's queries (and the time labels are shared by them)."""
        labels = [escape(label) for label in self.categories] if self.categories else _time_labels(tuple(self.x))
        columns = [series.values for series in self.series]
        cells = []
        for i, label in enumerate(labels):
            numbers = "".join(_cell(values[i]) for values in columns)
            cells.append(f'<tr><th scope="row">{label}</th>{numbers}</tr>')
        return mark_safe("".join(cells))  # labels escaped, numbers formatted here

    def rows(self) -> list[tuple[str, list[float | None]]]:
        """The table behind the chart: one row per x, labelled by its time or category."""
        labels = self.categories or [_time_label(x) for x in self.x]
        return [(label, [series.values[i] for series in self.series]) for i, label in enumerate(labels)]


def _cell(value: float | None) -> str:
    return f'<td class="num">{"—" if value is None else f"{value:.4g}"}</td>'


def _time_label(x: int) -> str:
    return datetime.fromtimestamp(x, tz=UTC).strftime("%Y-%m-%d %H:%M")


@lru_cache(maxsize=16)
def _time_labels(x: tuple[int, ...]) -> tuple[str, ...]:
    """The row labels of a time axis; the dashboard's charts share one axis, so it is formatted once."""
    return tuple(_time_label(value) for value in x)  # digits, dashes and colons: nothing to escape
