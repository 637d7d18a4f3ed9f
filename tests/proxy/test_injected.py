"""What the proxy injects: the workspace's knowledge, layer summaries and hints, never what its own prompt
carries (the turns the client sends itself, and their session's summary when it sends them all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai

from apps.assembly.models import AssemblyRecord
from apps.core import background
from apps.layers.models import Item, Layer
from apps.summaries.services import layer_summarize
from tests.proxy.proxied import Proxied
from tests.support.live import uvicorn_server
from tests.support.waiting import wait_until

CARRIED = "Our database backups are encrypted with AES-256 keys kept in the key management service."
HISTORY: list[Any] = [
    {"role": "user", "content": CARRIED},
    {"role": "assistant", "content": "Noted: the database backups are encrypted."},
    {"role": "user", "content": "When do the database backups run?"},
]


def test_it_injects_layer_summaries_but_not_the_turns_its_prompt_carries(proxied: Proxied, tmp_path: Path) -> None:
    layer_summarize(layer=proxied.a.root, force=True, extractive=True)
    assert background.wait_idle(120)
    # A server whose assemblies have time: past the 500 ms deadline a loaded machine leaves the summaries out.
    with uvicorn_server(tmp_path / "patient.log", settings={"ASSEMBLY_TIMEOUT_MS": "30000"}) as base:
        client = openai.OpenAI(
            base_url=f"{base}/proxy/openai/v1",
            api_key=proxied.a.secret,
            default_headers={"X-Context-Session": "carried-1"},
            max_retries=0,
        )
        raw = client.chat.completions.with_raw_response.create(model="gpt-4o", messages=HISTORY)
        assert "deadline" not in raw.headers.get("Warning", ""), raw.headers["Warning"]
        proxied.calls(1)
    context = proxied.openai.system_prompt()
    assert "Database backups are taken nightly" in context
    assert CARRIED not in context and "Noted: the database backups" not in context
    assert proxied.openai.last.body["messages"][1:] == HISTORY
    trace_id = raw.headers["X-Context-Trace-Id"]
    record = wait_until(lambda: AssemblyRecord.objects.filter(trace_id=trace_id).first(), what="the record")
    entries = {(e["source"], e["id"]): e for e in record.trace}
    # The company's summary is a candidate again (a kinds filter left it out before): in, or out only
    # because every sentence of it is already in the context (its two facts are; issue 20's rule).
    company = entries[("summary", proxied.a.root.pk)]
    assert company["decision"] == "included" or company["reason"] == "duplicate_text", record.trace
    own = Layer.objects.get(workspace=proxied.a.workspace, external_id="carried-1")
    turns = Item.objects.filter(layer=own, kind="message").order_by("id")
    assert [m.content for m in turns][:3] == [h["content"] for h in HISTORY]
    for found in [*(("item", m.pk) for m in turns[:3]), ("summary", own.pk)]:
        if found in entries:  # a search, the window or the session's summary found it: left out for it
            assert entries[found]["reason"] == "in_prompt", entries[found]
    assert ("item", turns[0].pk) in entries  # the window found the turns at least
