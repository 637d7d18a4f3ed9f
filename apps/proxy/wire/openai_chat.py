"""OpenAI's Chat Completions (`POST /chat/completions`), as any OpenAI-compatible server speaks it."""

from __future__ import annotations

import copy
from typing import Any

from apps.engine.policy import Resolution
from apps.proxy.compact import CHAT, compacted
from apps.proxy.turns import Turn, turn_of_openai
from apps.proxy.wire import Reply, joined


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class OpenAIChat:
    kind = "openai"
    path = "/chat/completions"

    def turns(self, body: dict[str, Any]) -> list[Turn]:
        return [turn_of_openai(m) for m in body.get("messages") or () if isinstance(m, dict)]

    def user(self, body: dict[str, Any]) -> str:
        user = body.get("user")
        return user if isinstance(user, str) else ""

    def counted(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
        tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
        return messages, tools

    def max_output(self, body: dict[str, Any]) -> int:
        return _int(body.get("max_completion_tokens")) or _int(body.get("max_tokens")) or 0

    def inject(self, body: dict[str, Any], context: str, *, before: bool) -> dict[str, Any]:
        """The context in the first system or developer message (one system message: some chat templates
        take no second), else as a system message of its own, first."""
        messages = list(body.get("messages") or [])
        for index, message in enumerate(messages):
            if isinstance(message, dict) and message.get("role") in ("system", "developer"):
                messages[index] = {**message, "content": joined(message.get("content"), context, before=before)}
                return {**body, "messages": messages}
        return {**body, "messages": [{"role": "system", "content": context}, *messages]}

    def compact(self, body: dict[str, Any], resolution: Resolution) -> tuple[dict[str, Any], int] | None:
        messages = [m for m in body.get("messages") or () if isinstance(m, dict)]
        kept, hidden = compacted(messages, resolution, CHAT)
        return {**body, "messages": kept}, hidden

    def prepare_stream(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Ask for the usage chunk (it calibrates the estimates); drop it when the client did not ask."""
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            return body, False
        changed = copy.copy(body)
        changed["stream_options"] = {**(options if isinstance(options, dict) else {}), "include_usage": True}
        return changed, True

    def _usage(self, reply: Reply, usage: object) -> None:
        if isinstance(usage, dict):
            reply.prompt_tokens = _int(usage.get("prompt_tokens"))
            reply.completion_tokens = _int(usage.get("completion_tokens"))

    def reply_of(self, answer: dict[str, Any]) -> Reply:
        reply = Reply(complete=True)
        choices = answer.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict):
                turn = turn_of_openai(message)
                reply.text.append(turn.text)
                for index, call in enumerate(turn.tool_calls):
                    reply.tool_calls[index] = {"id": call.id, "name": call.name, "arguments": call.arguments}
        self._usage(reply, answer.get("usage"))
        return reply

    def feed(self, reply: Reply, event: dict[str, Any]) -> bool:
        self._usage(reply, event.get("usage"))
        choices = event.get("choices")
        if not choices:
            return event.get("usage") is None  # the usage-only chunk
        first = _dict(choices[0] if isinstance(choices, list) else None)
        delta = _dict(first.get("delta"))
        if isinstance(delta.get("content"), str):
            reply.text.append(delta["content"])
        for call in delta.get("tool_calls") or ():
            if not isinstance(call, dict):
                continue
            slot = reply.tool_calls.setdefault(_int(call.get("index")) or 0, {})
            if call.get("id"):
                slot["id"] = str(call["id"])
            function = _dict(call.get("function"))
            if function.get("name"):
                slot["name"] = slot.get("name", "") + str(function["name"])
            if isinstance(function.get("arguments"), str):
                slot["arguments"] = slot.get("arguments", "") + function["arguments"]
        if first.get("finish_reason"):
            reply.complete = True
        return True
