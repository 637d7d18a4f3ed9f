"""The README's "For agents" snippets work as written: both MCP configurations and the Python example.

Only the placeholders change: the URL `http://127.0.0.1:8000` becomes the live server's and
`ca_...` the demo workspace's key (what a reader pastes in), and `command` is looked up in the
virtualenv's bin directory, as a shell with it activated would.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.support.processes import ROOT

pytestmark = pytest.mark.server
QUESTION = "Why did the retry worker overload Stripe?"


def for_agents_blocks() -> dict[str, list[str]]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## For agents\n", 1)[1].split("\n## ", 1)[0]
    blocks: dict[str, list[str]] = {}
    for language, body in re.findall(r"```(\w+)\n(.*?)```", section, flags=re.DOTALL):
        blocks.setdefault(language, []).append(body)
    return blocks


def filled(snippet: str, base: str, key: str) -> str:
    return snippet.replace("http://127.0.0.1:8000", base).replace("ca_...", key)


def test_the_readme_has_one_stdio_config_one_http_config_and_a_five_line_python_example() -> None:
    blocks = for_agents_blocks()
    servers = [json.loads(b)["mcpServers"]["context-architect"] for b in blocks["json"]]
    assert [("command" in s, "url" in s) for s in servers] == [(True, False), (False, True)]
    assert [len(b.strip().splitlines()) for b in blocks["python"]] == [5]


def test_the_python_example_runs_as_written(demo: tuple[str, str]) -> None:
    base, key = demo
    (example,) = for_agents_blocks()["python"]
    env = {**os.environ, "CONTEXTARCH_URL": base, "CONTEXTARCH_API_KEY": key}
    done = subprocess.run([sys.executable, "-c", example], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Stripe" in done.stdout and "Retry-After" in done.stdout


async def _ask(client: Client) -> tuple[set[str], Any]:
    tools = {t.name for t in (await client.list_tools()).tools}
    answer = await client.call_tool("get_context", {"layer_external_id": "demo-session-0001", "query": QUESTION})
    return tools, answer


def test_the_desktop_stdio_configuration_runs_as_written(demo: tuple[str, str]) -> None:
    base, key = demo
    config = json.loads(filled(for_agents_blocks()["json"][0], base, key))["mcpServers"]["context-architect"]
    command = shutil.which(config["command"], path=str(Path(sys.executable).parent))
    assert command, f"{config['command']} is not installed in the virtualenv (pip install ./clients/python[mcp])"

    async def session() -> tuple[set[str], Any]:
        async with Client(StdioServerParameters(command=command, args=config.get("args", []), env=config["env"])) as c:
            return await _ask(c)

    tools, answer = asyncio.run(session())
    assert "get_context" in tools and not answer.is_error
    assert "Retry-After" in answer.structured_content["context"]


def test_the_remote_http_configuration_runs_as_written(demo: tuple[str, str]) -> None:
    base, key = demo
    config = json.loads(filled(for_agents_blocks()["json"][1], base, key))["mcpServers"]["context-architect"]
    assert config["type"] == "http"

    async def session() -> tuple[set[str], Any]:
        async with httpx2.AsyncClient(headers=config["headers"], timeout=60) as http:
            async with Client(streamable_http_client(config["url"], http_client=http)) as c:
                return await _ask(c)

    tools, answer = asyncio.run(session())
    assert "get_context" in tools and not answer.is_error
    assert "Retry-After" in answer.structured_content["context"]
