"""The Python client (clients/python) against a live server, and a gateway that fails on purpose."""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from apps.core import background
from apps.layers.services import ItemInput, items_create, layer_create
from contextarch.demo import demo_seed
from tests.clients.live_data import FACTS, Gateway, Live
from tests.support.live import PORTS, port_free_in, server_idle
from tests.support.tenants import make_tenant


@pytest.fixture
def live(transactional_db: None, uvicorn_live: str) -> Iterator[Live]:
    a, b = make_tenant("acme"), make_tenant("globex")
    session = layer_create(workspace=a.workspace, kind="session", name="s1", parent=a.root, external_id="sess-a")
    items_create(
        layer=session, items=[ItemInput(kind="memory", type="fact", content=c, external_id=e) for e, c in FACTS]
    )
    assert background.wait_idle(120)
    yield Live(base=uvicorn_live, a=a, b=b, session=session)
    assert background.wait_idle(120)
    server_idle(uvicorn_live, a.secret)


@pytest.fixture
def demo(transactional_db: None, uvicorn_live: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The demo workspace on the live server: its base URL and API key (what the README examples use)."""
    result = demo_seed(credentials_path=tmp_path / "demo_credentials.json")
    assert background.wait_idle(120)
    yield uvicorn_live, result.credentials.api_key
    server_idle(uvicorn_live, result.credentials.api_key)


@pytest.fixture
def gateway(live: Live) -> Iterator[Gateway]:
    state = Gateway(upstream=live.base, failures=[])

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.seen.append(f"{self.command} {self.path}")
            state.idempotency_keys.append(self.headers.get("Idempotency-Key"))
            failure = state.failures.pop(0) if state.failures else None
            if failure is not None and failure[2]:
                self._forward(body)
            if failure is not None:
                status, headers, _ = failure
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status, payload, kind = self._forward(body)
            self.send_response(status)
            self.send_header("Content-Type", kind or "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _forward(self, body: bytes) -> tuple[int, bytes, str]:
            request = urllib.request.Request(state.upstream + self.path, data=body or None, method=self.command)
            for name in ("Authorization", "Content-Type", "Accept", "Idempotency-Key"):
                if self.headers.get(name):
                    request.add_header(name, self.headers[name])
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    return response.status, response.read(), response.headers["Content-Type"]
            except urllib.error.HTTPError as error:
                return error.code, error.read(), error.headers["Content-Type"]

        do_GET = do_POST = _relay

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port_free_in(PORTS)), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
