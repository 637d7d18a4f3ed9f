"""bench_assembly: a small real run, in-process and over HTTP against the scripts/serve workers it starts itself."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from apps.bench.assembly import bench_seed
from apps.layers.models import Item, Layer
from apps.layers.vectors import HNSW_INDEX, vector_available
from apps.workspaces.models import Workspace

pytestmark = pytest.mark.server

LINE = re.compile(
    r"^(?P<path>in-process|http) +(?P<mode>vector|hybrid|text) +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+ +(?P<cpu>[\d.]+|-) +"
    r"(?P<kw>[\d.]+|-) +"
    r"(?P<errors>\d+)/(?P<requests>\d+) +\d+ +(?P<cached>\d+) +(?P<tokens>\d+)$"
)


def test_it_times_every_mode_in_process_and_over_http_without_an_error(transactional_db: None, tmp_path: Path) -> None:
    out = io.StringIO()
    figures = tmp_path / "bench.json"
    call_command("bench_assembly", items=300, queries=10, concurrency=2, server=True, json=str(figures), stdout=out)
    lines = out.getvalue().splitlines()

    rows = [m for m in map(LINE.match, lines) if m]
    table = rows[len(rows) // 2 :]  # progress lines first, then the same rows as one table
    assert {(m["path"], m["mode"]) for m in table} == {
        (path, mode) for path in ("in-process", "http") for mode in ("vector", "hybrid", "text")
    }, lines
    assert all(
        m["errors"] == "0" and m["requests"] == "10" and m["cached"] == "0" and int(m["tokens"]) > 0 for m in table
    ), lines
    assert all(float(m["cpu"]) > 0 for m in table), lines  # server processes + PostgreSQL, from /proc
    assert all((m["kw"] == "-") == (m["mode"] == "vector") for m in table), lines  # the keyword stage's p95
    assert any("http vector p95" in line and ("met" in line or "MISSED" in line) for line in lines), lines
    assert any(line.startswith("floor: p50") for line in lines), lines
    assert not Workspace.objects.filter(slug__startswith="bench-").exists()

    data = json.loads(figures.read_text())
    assert (data["items"], data["concurrency"]) == (300, 2)
    assert {(r["mode"], r["path"]) for r in data["rows"]} == {(m["mode"], m["path"]) for m in table}
    assert all(
        set(r)
        == {
            "mode",
            "path",
            "p50_ms",
            "p95_ms",
            "rps",
            "server_cpu_ms",
            "requests",
            "keyword_p95_ms",
            "partial",
            "errors",
        }
        for r in data["rows"]
    )
    assert all((r["requests"], r["errors"]) == (10, 0) and r["partial"] >= 0 for r in data["rows"])
    assert data["floor_ms"] > 0 and data["floor_ratio"] > 0 and data["embedding_items_per_s"] > 0


def test_it_times_several_sizes_and_prints_one_table_of_them(transactional_db: None, tmp_path: Path) -> None:
    out = io.StringIO()
    figures = tmp_path / "sizes.json"
    call_command(
        "bench_assembly", sizes="120,260", mode="vector", queries=4, embedding_batch=0, json=str(figures), stdout=out
    )
    lines = out.getvalue().splitlines()

    table = lines[lines.index(next(line for line in lines if line.startswith("every size"))) :]
    sized = [re.match(r"^ *(?P<items>[\d,]+) (?P<rest>.*)$", line) for line in table[2:]]
    assert [(m["items"], LINE.match(m["rest"]) is not None or m["rest"].startswith("floor:")) for m in sized if m] == [
        ("120", True),
        ("120", True),
        ("260", True),
        ("260", True),
    ], table
    assert not Workspace.objects.filter(slug__startswith="bench-").exists()  # each deleted after its run
    data = json.loads(figures.read_text())
    assert [run["items"] for run in data] == [120, 260]
    assert all(row["requests"] == 4 and row["errors"] == 0 for run in data for row in run["rows"])


def _item_indexes() -> set[tuple[str, str]]:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN ('layers_item', 'layers_itemsearch')"
        )
        return set(cur.fetchall())


def test_it_seeds_a_project_of_sessions_by_copy_and_rebuilds_every_index(transactional_db: None) -> None:
    indexes = _item_indexes()
    seeded = bench_seed(items=120, rebuild_index_from=100)

    project = Layer.objects.get(pk=seeded.layer_id)
    assert project.kind == "project"
    assert Item.objects.filter(workspace=seeded.workspace, embedding__isnull=True).count() == 0
    assert Item.objects.filter(workspace=seeded.workspace).count() == 120
    assert set(Item.objects.filter(workspace=seeded.workspace).values_list("kind", flat=True)) >= {
        "message",
        "memory",
        "spec",
        "package",
    }
    phases = [name for name, _ in seeded.phases]
    assert seeded.index_rebuilt and "COPY 120 rows" in phases and f"index {HNSW_INDEX}" in phases
    assert _item_indexes() == indexes  # every index dropped for the load is back, as it was
    if vector_available():
        with connection.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [HNSW_INDEX])
            assert cur.fetchone() is not None


def test_it_saves_the_keyword_ids_of_the_bench_questions_then_compares_them(
    transactional_db: None, tmp_path: Path
) -> None:
    saved = tmp_path / "keyword.json"
    seeded = bench_seed(items=300)
    first, second = io.StringIO(), io.StringIO()
    call_command("bench_assembly", reuse=seeded.workspace.slug, keyword_check=str(saved), stdout=first)
    ids = json.loads(saved.read_text())
    assert len(ids) == 300 and all(ids.values()), first.getvalue()  # every question finds something
    call_command("bench_assembly", reuse=seeded.workspace.slug, keyword_check=str(saved), stdout=second)
    assert "identical to" in second.getvalue() and "for 300 of 300 questions" in second.getvalue()
