"""What the MCP tests share: the stdio command, the messages stored, the served workspace, how to connect."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from mcp import Client

from apps.layers.models import Layer
from tests.support.tenants import Tenant

# The console command of the Python client (clients/python, installed by requirements.txt).
STDIO_COMMAND = Path(sys.executable).parent / "contextarch-mcp"


MESSAGES = [
    ("user", "The login page returns a 500 after the OAuth callback.", ["auth"]),
    ("assistant", "The callback handler reads the state cookie before the session is loaded.", ["auth"]),
    ("user", "Decision: we load the session first, then validate the state cookie.", ["auth"]),
]


@dataclass
class Served:
    """Two workspaces on a live server: `a` with a session of facts and messages, `b` empty."""

    base: str
    a: Tenant
    b: Tenant
    session: Layer


McpConnect = Callable[[str], AbstractAsyncContextManager[Client]]
