"""Server-Sent Events from lines: `event:` and `data:` fields, dispatched at each blank line."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from contextarch_client.models import StreamEvent


@dataclass
class SseParser:
    """Feed lines (without their newline); `feed` returns the event a blank line completes, if any."""

    event: str = "message"
    data: list[str] = field(default_factory=list)

    def feed(self, line: str) -> StreamEvent | None:
        if line == "":
            if not self.data:
                self.event = "message"
                return None
            done = StreamEvent(event=self.event, data=json.loads("\n".join(self.data)))
            self.event, self.data = "message", []
            return done
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self.event = value
        elif name == "data":
            self.data.append(value)
        return None
