"""Anthropic's Messages API (`POST /v1/messages`): the `system` field, content blocks, its stream events."""

from __future__ import annotations

import json
from typing import Any

from apps.engine.policy import Resolution
from apps.proxy.compact import ANTHROPIC, compacted
from apps.proxy.turns import Turn, system_turn, turns_of_anthropic
from apps.proxy.wire import Reply


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class AnthropicMessages:
    kind = "anthropic"
    path = "/v1/messages"

    def turns(self, body: dict[str, Any]) -> list[Turn]:
        system = system_turn(body.get("system"))
        turns = [system] if system else []
        for message in body.get("messages") or ():
            if isinstance(message, dict):
                turns += turns_of_anthropic(message)
        return turns

    def user(self, body: dict[str, Any]) -> str:
        metadata = body.get("metadata")
        user = metadata.get("user_id") if isinstance(metadata, dict) else None
        return user if isinstance(user, str) else ""

    def counted(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        system = body.get("system")
        messages = [{"role": "system", "content": system}] if system else []
        messages += [m for m in body.get("messages") or () if isinstance(m, dict)]
        return messages, [t for t in body.get("tools") or () if isinstance(t, dict)]

    def max_output(self, body: dict[str, Any]) -> int:
        return _int(body.get("max_tokens")) or 0

    def inject(self, body: dict[str, Any], context: str, *, before: bool) -> dict[str, Any]:
        """The context as a block of `system`, before or after the client's (a string system prompt
        becomes a block of its own, so that a cache mark on the client's blocks keeps matching)."""
        system = body.get("system")
        own: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) and system else []
        if isinstance(system, list):
            own = list(system)
        block = {"type": "text", "text": context}
        return {**body, "system": [block, *own] if before else [*own, block]}

    def compact(self, body: dict[str, Any], resolution: Resolution) -> tuple[dict[str, Any], int] | None:
        """The messages at `resolution` (the `system` field stays)."""
        messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
        kept, hidden = compacted(messages, resolution, ANTHROPIC)
        return {**body, "messages": kept}, hidden

    def prepare_stream(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        return body, False  # the stream carries its usage already

    def reply_of(self, answer: dict[str, Any]) -> Reply:
        reply = Reply(complete=True)
        for index, block in enumerate(answer.get("content") or ()):
            self._block(reply, index, block)
        usage = answer.get("usage")
        if isinstance(usage, dict):
            reply.prompt_tokens = self._prompt(usage)
            reply.completion_tokens = _int(usage.get("output_tokens"))
        return reply

    def _prompt(self, usage: dict[str, Any]) -> int | None:
        """Every input token the model read: uncached, written to and read from the cache."""
        parts = [_int(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
        return None if parts[0] is None else sum(p or 0 for p in parts)

    def _block(self, reply: Reply, index: int, block: object, *, streamed: bool = False) -> None:
        if not isinstance(block, dict):
            return
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            reply.text.append(block["text"])
        elif block.get("type") == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
            reply.tool_calls[index] = {
                "id": str(block.get("id") or ""),
                "name": str(block.get("name") or ""),
                "arguments": "" if streamed else arguments,  # a stream sends the input in pieces
            }

    def feed(self, reply: Reply, event: dict[str, Any]) -> bool:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            usage = event["message"].get("usage")
            if isinstance(usage, dict):
                reply.prompt_tokens = self._prompt(usage)
        elif kind == "content_block_start":
            self._block(reply, _int(event.get("index")) or 0, event.get("content_block"), streamed=True)
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            delta, index = event["delta"], _int(event.get("index")) or 0
            if delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
                reply.text.append(delta["text"])
            elif delta.get("type") == "input_json_delta" and isinstance(delta.get("partial_json"), str):
                slot = reply.tool_calls.setdefault(index, {})
                slot["arguments"] = slot.get("arguments", "") + delta["partial_json"]
        elif kind == "content_block_stop":
            self._canonical_arguments(reply, _int(event.get("index")) or 0)
        elif kind == "message_delta" and isinstance(event.get("usage"), dict):
            reply.completion_tokens = _int(event["usage"].get("output_tokens"))
        elif kind == "message_stop":
            reply.complete = True
        return True

    def _canonical_arguments(self, reply: Reply, index: int) -> None:
        """A streamed tool input as the sorted compact JSON the next request's `input` hashes to."""
        slot = reply.tool_calls.get(index)
        if slot is None:
            return
        try:
            value = json.loads(slot.get("arguments") or "{}")
        except ValueError:
            return
        slot["arguments"] = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
