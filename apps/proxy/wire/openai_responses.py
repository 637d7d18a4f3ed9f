"""OpenAI's Responses API (`POST /responses`): `instructions`, `input` as a string or items, its stream events.

A call that continues a stored response (`previous_response_id`) sends only its new items: those are
stored, and the context is assembled for them as for any other call.
"""

from __future__ import annotations

from typing import Any

from apps.engine.policy import Resolution
from apps.proxy.compact import RESPONSES, compacted
from apps.proxy.turns import ToolCall, Turn, turn_of_openai
from apps.proxy.wire import Reply, joined


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    given = body.get("input")
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    return [item for item in given or () if isinstance(item, dict)] if isinstance(given, list) else []


def turn_of_item(item: dict[str, Any]) -> Turn | None:
    """A message item (with a role), a function call, or a function call's output, as a turn."""
    kind = item.get("type")
    if kind == "function_call":
        call = ToolCall(
            id=str(item.get("call_id") or ""),
            name=str(item.get("name") or ""),
            arguments=str(item.get("arguments") or ""),
        )
        return Turn(role="assistant", text="", tool_calls=(call,))
    if kind == "function_call_output":
        output = item.get("output")
        return Turn(
            role="tool", text=output if isinstance(output, str) else "", tool_call_id=str(item.get("call_id") or "")
        )
    if "role" in item and kind in (None, "message"):
        return turn_of_openai({"role": item["role"], "content": item.get("content")})
    return None  # reasoning, web search calls, ...: not turns of the conversation


class OpenAIResponses:
    kind = "openai"
    path = "/responses"

    def turns(self, body: dict[str, Any]) -> list[Turn]:
        instructions = body.get("instructions")
        turns = [Turn(role="system", text=instructions)] if isinstance(instructions, str) and instructions else []
        return turns + [t for t in map(turn_of_item, _items(body)) if t is not None]

    def user(self, body: dict[str, Any]) -> str:
        user = body.get("user") or body.get("safety_identifier")
        return user if isinstance(user, str) else ""

    def counted(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        messages = [{"role": t.role, "content": t.rendered()} for t in self.turns(body)]
        return messages, [t for t in body.get("tools") or () if isinstance(t, dict)]

    def max_output(self, body: dict[str, Any]) -> int:
        return _int(body.get("max_output_tokens")) or 0

    def inject(self, body: dict[str, Any], context: str, *, before: bool) -> dict[str, Any]:
        """The context in `instructions`, else in the first system or developer input item, else as the
        `instructions` (which a stored response does not carry over: each call brings its own)."""
        instructions = body.get("instructions")
        if isinstance(instructions, str) and instructions:
            return {**body, "instructions": joined(instructions, context, before=before)}
        given = body.get("input")
        items: list[Any] = list(given) if isinstance(given, list) else []
        for index, item in enumerate(items):
            if isinstance(item, dict) and item.get("role") in ("system", "developer"):
                items[index] = {**item, "content": joined(item.get("content"), context, before=before)}
                return {**body, "input": items}
        return {**body, "instructions": context}

    def compact(self, body: dict[str, Any], resolution: Resolution) -> tuple[dict[str, Any], int] | None:
        """The input items at `resolution` (`instructions` stay); a string input is one message: None."""
        given = body.get("input")
        if not isinstance(given, list):
            return None
        kept, hidden = compacted([item for item in given if isinstance(item, dict)], resolution, RESPONSES)
        return {**body, "input": kept}, hidden

    def prepare_stream(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        return body, False  # `response.completed` carries the usage

    def reply_of(self, answer: dict[str, Any]) -> Reply:
        reply = Reply(complete=answer.get("status") in (None, "completed"))
        for item in answer.get("output") or ():
            turn = turn_of_item(item) if isinstance(item, dict) else None
            if turn is None or turn.role != "assistant":
                continue
            reply.text.append(turn.text)
            for call in turn.tool_calls:
                reply.tool_calls[len(reply.tool_calls)] = {
                    "id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
        usage = answer.get("usage")
        if isinstance(usage, dict):
            reply.prompt_tokens = _int(usage.get("input_tokens"))
            reply.completion_tokens = _int(usage.get("output_tokens"))
        return reply

    def feed(self, reply: Reply, event: dict[str, Any]) -> bool:
        """The whole response comes with `response.completed`: the reply is read from it."""
        if event.get("type") in ("response.completed", "response.incomplete") and isinstance(
            event.get("response"), dict
        ):
            whole = self.reply_of(event["response"])
            reply.text, reply.tool_calls = whole.text, whole.tool_calls
            reply.prompt_tokens, reply.completion_tokens = whole.prompt_tokens, whole.completion_tokens
            reply.complete = True
        return True
