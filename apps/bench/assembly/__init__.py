"""The assembly benchmark behind `manage.py bench_assembly`: seed a large synthetic workspace, then time
context requests in-process and over HTTP (p50/p95/p99, throughput) against the issue's targets.

`corpus` makes the content and the requests, `seed` loads the workspace, `clients` send the requests,
`server` starts the uvicorn workers of `scripts/serve`, `report` turns samples into lines, `run` puts them together.
"""

from __future__ import annotations

from apps.bench.assembly.run import MODES, BenchOptions, bench_paths
from apps.bench.assembly.seed import Seeded, bench_delete, bench_reuse, bench_seed

__all__ = ["MODES", "BenchOptions", "Seeded", "bench_delete", "bench_paths", "bench_reuse", "bench_seed"]
