"""ASGI entry point: HTTP through Django (and /mcp/ through the MCP server), WebSocket through Channels."""

from __future__ import annotations

import gc
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextarch.settings")

from contextarch.handler import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from apps.core.body_limit import BodyLimitMiddleware  # noqa: E402
from apps.core.embeddings import preload as preload_embedder  # noqa: E402
from apps.core.tokenizer import ENCODINGS as tokenizer_encodings  # noqa: E402
from apps.core.tokenizer import preload as preload_tokenizer  # noqa: E402
from apps.mcp_server.endpoint import with_mcp  # noqa: E402
from apps.workspaces.ws_auth import ApiKeyWebsocketMiddleware  # noqa: E402
from contextarch.websocket import websocket_urlpatterns  # noqa: E402

# The tokenizer's vocabularies and the local embedding model load here, not in the first request
# (cold, that request spent ~0.7 s loading them and passed its deadline).
preload_tokenizer(settings.TOKENIZER_PRELOAD or tokenizer_encodings)
preload_embedder()

if settings.EMBEDDING_CHECK_AT_START:  # a configuration whose vectors cannot be stored stops the worker here
    from django.db import connections

    from apps.layers.embedding_space import space_sync

    space_sync()
    connections.close_all()

if settings.INPROCESS_BEAT and settings.BACKGROUND_MODE == "inprocess":
    from apps.core.periodic import start_inprocess_beat

    start_inprocess_beat()

# Everything loaded so far lives as long as the process: frozen, the garbage collector's full
# collections skip it. Unfrozen, a full collection scanned ~190k objects in ~110 ms, once every
# ~400 requests, stalling every request of the worker at once.
gc.collect()
gc.freeze()
# A context request allocates thousands of objects that reference counting frees; at Python's
# default of 700 the youngest generation was collected ~1.6 times a request (settings.GC_YOUNG_THRESHOLD).
gc.set_threshold(settings.GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])

application = ProtocolTypeRouter(
    {
        "http": BodyLimitMiddleware(with_mcp(django_asgi_app)),
        "websocket": ApiKeyWebsocketMiddleware(URLRouter(websocket_urlpatterns)),
    }
)
