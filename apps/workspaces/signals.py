"""What a higher app may hook onto without workspaces importing it (dependencies point one way).

`workspace_created` is sent by `workspace_create` inside its transaction, after the workspace row is
saved: a receiver that fails rolls the whole creation back, so no workspace is ever left without
what its receivers make (layers makes the company root layer, connected in `LayersConfig.ready`).

`status_read` is sent by `selectors.workspace_status` (`GET /api/v1/status/`, the status WebSocket,
the console's state dump): each receiver answers with the part of the status it owns, a dict merged
in the order the receivers were connected (layers: counts, embedding backlog, background queue and
providers, connected in `LayersConfig.ready`).
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent with `workspace` (the saved Workspace).
workspace_created = Signal()

# Sent with `workspace`; each receiver returns a dict of status fields.
status_read = Signal()
