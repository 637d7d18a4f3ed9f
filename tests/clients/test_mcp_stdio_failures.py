"""`contextarch-mcp` says what is wrong on stderr and exits, instead of hanging a desktop agent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.live import PORTS, port_free_in

COMMAND = str(Path(sys.executable).parent / "contextarch-mcp")


def test_it_exits_2_naming_the_variable_when_the_key_is_not_set() -> None:
    env = {"PATH": "/usr/bin:/bin", "CONTEXTARCH_URL": "http://127.0.0.1:9"}
    done = subprocess.run([COMMAND], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "CONTEXTARCH_API_KEY" in done.stderr


def test_it_exits_1_naming_the_url_when_nothing_answers_there() -> None:
    url = f"http://127.0.0.1:{port_free_in(PORTS)}"
    env = {"PATH": "/usr/bin:/bin", "CONTEXTARCH_URL": url, "CONTEXTARCH_API_KEY": "ca_x"}
    done = subprocess.run([COMMAND], env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"contextarch-mcp: cannot serve {url}/mcp/" in done.stderr
