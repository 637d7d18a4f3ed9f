"""What higher apps hook onto when items change, so layers never imports them (dependencies point one way).

Sent by `apps.layers.services`; receivers are connected in the higher app's `AppConfig.ready`:
- `item_prepared(item=)`: a new item, or one whose text changed, before it is saved; a receiver may
  adjust it (conversations raises a message that states a decision to decision importance).
- `changes_counted(layer_id=)`: item writes were counted toward the layer's change trigger, inside the
  writing transaction (summaries summarizes after commit once the threshold is reached).
- `messages_created(layer_id=)`: messages were created in the layer, inside the transaction, after the
  embedding sweep was queued (conversations recomputes the layer's communities after it).
"""

from __future__ import annotations

from django.dispatch import Signal

item_prepared = Signal()
changes_counted = Signal()
messages_created = Signal()
