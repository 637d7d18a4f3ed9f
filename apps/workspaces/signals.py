"""What a higher app may hook onto without workspaces importing it (dependencies point one way).

`workspace_created` is sent by `workspace_create` inside its transaction, after the workspace row is
saved: a receiver that fails rolls the whole creation back, so no workspace is ever left without
what its receivers make (layers makes the company root layer, connected in `LayersConfig.ready`).
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent with `workspace` (the saved Workspace).
workspace_created = Signal()
