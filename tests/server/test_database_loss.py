"""The embedded PostgreSQL killed under scripts/serve: requests fail fast with 503 and Retry-After,
the probes tell the truth, the serving process restarts the database, and nothing acknowledged is lost."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.processes import free_port, http_json, manage, served
from tests.support.waiting import wait_until

pytestmark = pytest.mark.server


def _following_retry_after(
    method: str, url: str, body: dict[str, object] | None, headers: dict[str, str]
) -> tuple[int, dict[str, str], object]:
    """A request retried while it gets a fast 503 with Retry-After (at most 5 tries)."""
    for _ in range(5):
        status, answer_headers, answer = http_json(method, url, body, headers, timeout=10)
        if status != 503:
            return status, answer_headers, answer
        assert answer["error"]["code"] == "database_unavailable", answer  # type: ignore[index]
        time.sleep(min(int(answer_headers["retry-after"]), 5))
    return status, answer_headers, answer


def test_a_killed_database_answers_503_fast_and_comes_back_with_every_acknowledged_write(
    var_dir: Path, tmp_path: Path
) -> None:
    # A private embedded server: the only postmaster this test may kill.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(CONTEXTARCH_VAR_DIR=str(var_dir), OMP_NUM_THREADS="1")
    manage(env, "migrate", "--noinput")
    key = manage(env, "create_workspace", "outage").strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {key}"}

    log_path = var_dir.parent / "serve.log"
    with served(env, free_port(), log_path, workers=2) as base:
        status, _, layers = http_json("GET", f"{base}/api/v1/layers/?kind=company", headers=auth)
        assert status == 200, layers
        root = layers["results"][0]["id"]
        item = {"layer": root, "kind": "memory", "type": "fact", "content": "Backups are kept for 35 days."}
        status, _, written = http_json("POST", f"{base}/api/v1/items/", item, auth)
        assert status == 201, written
        assert http_json("GET", f"{base}/readyz")[0] == 200

        postmaster = int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
        os.kill(postmaster, signal.SIGKILL)

        seen: list[tuple[int, float, dict[str, str], object]] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            started = time.monotonic()
            status, headers, body = http_json("GET", f"{base}/api/v1/layers/", headers=auth, timeout=10)
            seen.append((status, time.monotonic() - started, headers, body))
            if status == 503:
                assert http_json("GET", f"{base}/healthz")[0] == 200  # alive, though not ready
                ready_status, _, ready = http_json("GET", f"{base}/readyz", timeout=10)
                assert ready_status in (503, 200), ready  # 200 only if the restart won the race
            if status == 200 and any(s == 503 for s, *_ in seen):
                break
            time.sleep(0.1)

        outages = [(took, headers, body) for status, took, headers, body in seen if status == 503]
        assert outages, [s for s, *_ in seen]
        assert {status for status, *_ in seen} <= {200, 503}, [(s, b) for s, _, _, b in seen if s not in (200, 503)]
        for took, headers, body in outages:
            assert took < 1.0, f"a 503 took {took:.2f}s: {[(s, round(t, 2), b) for s, t, _, b in seen]}"
            assert body["error"]["code"] == "database_unavailable" and int(headers["retry-after"]) >= 1  # type: ignore[index]
        assert seen[-1][0] == 200, "the service did not recover"

        wait_until(lambda: http_json("GET", f"{base}/readyz")[0] == 200, timeout=30, what="ready again")
        # Each worker finds the database back on its own next probe (at most every 0.5 s), so a
        # client that meets another worker still marked down follows Retry-After, as it is told to.
        status, _, got = _following_retry_after("GET", f"{base}/api/v1/items/{written['id']}/", None, auth)
        assert status == 200 and got["content"] == item["content"]  # the acknowledged write survived
        more_item = {**item, "content": "Restores run monthly."}
        status, _, more = _following_retry_after("POST", f"{base}/api/v1/items/", more_item, auth)
        assert status == 201, more
        new_postmaster = int((var_dir / "pgdata" / "postmaster.pid").read_text().split()[0])
        assert new_postmaster != postmaster
    log = log_path.read_text()
    assert "restarting it" in log, log[-3000:]
