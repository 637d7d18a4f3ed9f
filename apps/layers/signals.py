"""What higher apps hook onto when items change, so layers never imports them (dependencies point one way).

Sent by `apps.layers.services`; receivers are connected in the higher app's `AppConfig.ready`:
- `layer_created(layer=)`: a layer was created, inside the creating transaction (summaries stores the
  layer's summary configuration with its kind's defaults).
- `item_prepared(item=)`: a new item, or one whose text changed, before it is saved; a receiver may
  adjust it (conversations raises a message that states a decision to decision importance).
- `changes_counted(layer_id=, count=)`: `count` item writes of the layer, inside the writing transaction
  (summaries counts them toward the layer's change trigger and summarizes after commit once it is reached).
- `messages_created(layer_id=)`: messages were created in the layer, inside the transaction, after the
  embedding sweep was queued (conversations recomputes the layer's communities after it).

And one registry, filled in the same way:
- `item_annotations`: what the items API shows of an item from a higher app's rows, by name, as an
  expression over `Item` (conversations: `served_count` and `served_last`, from its access counts).
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal

layer_created = Signal()
item_prepared = Signal()
changes_counted = Signal()
messages_created = Signal()
item_annotations: dict[str, Any] = {}
