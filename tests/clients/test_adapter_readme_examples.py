"""The framework adapters' examples of clients/python/README.md run as written against the demo workspace.

Only the environment is given: the service's URL and the demo's key, and for the OpenAI Agents
example a local stand-in for the Responses API (OPENAI_BASE_URL) with tracing export off.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.fake_provider import fake_provider
from tests.support.processes import ROOT

pytestmark = pytest.mark.server


def examples() -> dict[str, str]:
    readme = (ROOT / "clients" / "python" / "README.md").read_text()
    section = readme.split("\n## Framework adapters\n", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    by_module = {}
    for block in blocks:
        (module,) = re.findall(r"from contextarch_client\.(\w+) import", block)
        by_module[module] = block
    return by_module


def run(example: str, base: str, key: str, **env: str) -> str:
    # The client of this checkout, as the suite imports it (pyproject's pythonpath), whichever is installed.
    path = os.pathsep.join(filter(None, [str(ROOT / "clients" / "python" / "src"), os.environ.get("PYTHONPATH")]))
    full = {**os.environ, "PYTHONPATH": path, "CONTEXTARCH_URL": base, "CONTEXTARCH_API_KEY": key, **env}
    done = subprocess.run([sys.executable, "-c", example], env=full, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_there_is_one_example_per_adapter() -> None:
    assert sorted(examples()) == ["langgraph", "llama_index", "openai_agents"]


def test_the_openai_agents_example_runs_as_written(demo: tuple[str, str]) -> None:
    with fake_provider(reply="Answered from the context.") as llm:
        out = run(
            examples()["openai_agents"],
            *demo,
            OPENAI_BASE_URL=llm.url,
            OPENAI_API_KEY="stand-in",
            OPENAI_AGENTS_DISABLE_TRACING="1",
        )

    (request,) = llm.requests
    assert request["instructions"].startswith("Answer from this context.") and "Retry-After" in request["instructions"]
    assert out.strip() == f"{llm.reply} 2"


def test_the_langgraph_example_runs_as_written(demo: tuple[str, str]) -> None:
    out = run(examples()["langgraph"], *demo)

    key, score, content = out.splitlines()[0].split(" ", 2)
    assert key == "diet" and float(score) > 0 and "peanuts" in content


def test_the_llama_index_example_runs_as_written(demo: tuple[str, str]) -> None:
    out = run(examples()["llama_index"], *demo)

    assert "<context_architect>" in out and "Retry-After" in out
