"""A server with short deadlines: an assembly past its deadline and an upstream past its timeout."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.proxy.proxied import UPSTREAM_KEY, Proxied
from tests.support.live import uvicorn_server


@pytest.fixture
def impatient(proxied: Proxied, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """Another live server whose assemblies have 1 ms and whose upstreams have 1 s, and its log."""
    log = tmp_path / "impatient.log"
    settings = {"ASSEMBLY_TIMEOUT_MS": "1", "PROXY_UPSTREAM_TIMEOUT_S": "1"}
    with uvicorn_server(log, settings=settings) as base:
        yield base, log


def sdk(base: str, proxied: Proxied) -> openai.OpenAI:
    headers = {"X-Context-Session": "late-1"}
    return openai.OpenAI(
        base_url=f"{base}/proxy/openai/v1", api_key=proxied.a.secret, default_headers=headers, max_retries=0
    )


def test_an_assembly_past_its_deadline_and_a_silent_upstream(impatient: tuple[str, Path], proxied: Proxied) -> None:
    base, log = impatient
    client = sdk(base, proxied)
    question = [{"role": "user", "content": "When do the database backups run?"}]
    raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=question)  # type: ignore[arg-type]
    assert raw.parse().choices[0].message.content == "The backups run nightly at 02:00 UTC."
    assert "deadline" in raw.headers["Warning"]
    proxied.openai.hold = threading.Event()  # the upstream says nothing until the test is over
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="gpt-4o", messages=question)  # type: ignore[arg-type]
    assert raised.value.status_code == 504
    assert raised.value.body["code"] == "upstream_timeout"  # type: ignore[index]
    assert [c.status for c in proxied.calls(2)] == [200, 504]
    assert UPSTREAM_KEY not in log.read_text()
