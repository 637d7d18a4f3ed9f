"""The wire formats the proxy speaks: what a request says and where context goes in it, and what an
answer (whole, or as server-sent events) says back. Pure: no database, no network."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from apps.engine.policy import Resolution
from apps.proxy.turns import ToolCall, Turn


@dataclass
class Reply:
    """The assistant's turn and the usage an upstream reported, collected from a whole answer or a stream."""

    text: list[str] = field(default_factory=list)
    tool_calls: dict[int, dict[str, str]] = field(default_factory=dict)  # by index: id, name, arguments
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    complete: bool = False

    def turn(self) -> Turn | None:
        calls = tuple(
            ToolCall(id=c.get("id", ""), name=c.get("name", ""), arguments=c.get("arguments", ""))
            for _, c in sorted(self.tool_calls.items())
        )
        text = "".join(self.text)
        if not text and not calls:
            return None
        return Turn(role="assistant", text=text, tool_calls=calls)


class Wire(Protocol):
    """One wire format: how a request is read and changed, and how its answer is read."""

    kind: str  # the upstream kind it is sent to (apps.proxy.models.WireFormat)
    path: str  # appended to the upstream's base URL

    def turns(self, body: dict[str, Any]) -> list[Turn]: ...

    def user(self, body: dict[str, Any]) -> str: ...

    def counted(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        """The request's messages (system included) and tools, as the token counter takes them."""
        ...

    def max_output(self, body: dict[str, Any]) -> int: ...

    def inject(self, body: dict[str, Any], context: str, *, before: bool) -> dict[str, Any]:
        """The body with the context in its system prompt, before or after the client's own text."""
        ...

    def compact(self, body: dict[str, Any], resolution: Resolution) -> tuple[dict[str, Any], int] | None:
        """The body with its conversation at `resolution` and how many messages were left out; None when
        this format is not compacted."""
        ...

    def prepare_stream(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The body to send for a streamed call, and whether events the client did not ask for must be dropped."""
        ...

    def reply_of(self, answer: dict[str, Any]) -> Reply: ...

    def feed(self, reply: Reply, event: dict[str, Any]) -> bool:
        """Take one streamed event's data into `reply`; False: drop it (the client did not ask for it)."""
        ...


def sse_events(buffer: bytearray) -> Iterator[bytes]:
    """Cut the complete events (ending in a blank line) off the front of `buffer`."""
    while True:
        ends = [(i, n) for i, n in ((buffer.find(b"\n\n"), 2), (buffer.find(b"\r\n\r\n"), 4)) if i >= 0]
        if not ends:
            return
        index, length = min(ends)
        event = bytes(buffer[: index + length])
        del buffer[: index + length]
        yield event


def sse_data(event: bytes) -> str | None:
    """The `data:` lines of one event joined, or None when it has none."""
    lines = [
        line[5:].removeprefix(b" ").decode("utf-8", "replace")
        for line in event.replace(b"\r\n", b"\n").split(b"\n")
        if line.startswith(b"data:")
    ]
    return "\n".join(lines) if lines else None


def joined(content: object, context: str, *, before: bool) -> object:
    """A system prompt's content with the context joined to it: before or after its text (a string), or
    as a text part before or after its parts (a list of parts, e.g. with cache marks kept as they are)."""
    if isinstance(content, list):
        part = {"type": "text", "text": context}
        return [part, *content] if before else [*content, part]
    text = content if isinstance(content, str) else ""
    if not text:
        return context
    return f"{context}\n\n{text}" if before else f"{text}\n\n{context}"


def latest_user_text(turns: list[Turn]) -> str:
    for turn in reversed(turns):
        if turn.role == "user" and turn.text.strip():
            return turn.text
    return ""
