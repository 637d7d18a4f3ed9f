"""Workspace events for WebSocket subscribers, on every server instance (channels-redis with
REDIS_URL, in-memory in one process otherwise): sent after commit, never failing the write."""

from __future__ import annotations

import logging

from django.db import transaction

log = logging.getLogger(__name__)


def status_group(workspace_id: int) -> str:
    return f"workspace-status-{workspace_id}"


def _send_status_changed(workspace_id: int) -> None:
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    try:
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(status_group(workspace_id), {"type": "status.changed"})
    except Exception:  # noqa: BLE001 - a channel layer outage loses a notification, never a write
        log.warning("could not tell workspace %s's subscribers about a change", workspace_id, exc_info=True)


def status_changed(workspace_id: int) -> None:
    """Tell the workspace's status subscribers its counts changed (items written or embedded)."""
    transaction.on_commit(lambda: _send_status_changed(workspace_id), robust=True)
