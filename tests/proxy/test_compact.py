"""Compacting a conversation by distance from its newest message (pure: no database, no server)."""

from __future__ import annotations

from typing import Any

from apps.engine.policy import Resolution
from apps.proxy.compact import ANTHROPIC, RESPONSES, compacted


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be terse."}]
    for n in range(turns):
        messages.append({"role": "user", "content": f"Question {n} is long. It goes on and on about storage plans."})
        messages.append({"role": "assistant", "content": f"Answer {n} is long too. It explains the plan in depth."})
    return messages


def test_it_keeps_the_nearest_in_full_shortens_the_next_and_leaves_the_rest_out() -> None:
    messages = conversation(10)
    kept, hidden = compacted(messages, Resolution(full_context_distance=2, summary_distance=4, title_distance=6))
    assert hidden == 20 - 7
    assert kept[0] == messages[0] and kept[1]["role"] == "system" and "13 earlier messages" in kept[1]["content"]
    assert kept[-3:] == messages[-3:]  # distances 0, 1, 2
    assert [m["content"] for m in kept[4:6]] == ["Answer 7 is long too.", "Question 8 is long."]  # summaries
    assert kept[3]["content"] == "Question 7 is long. It goes on and on about storage plans."  # a title: 12 words
    assert len(kept) == 2 + 7


def test_a_tool_call_and_its_results_stay_or_go_together() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "42"}
    messages = [*conversation(3), call, result, {"role": "user", "content": "Thanks. What next?"}]
    kept, _ = compacted(messages, Resolution(full_context_distance=0, summary_distance=5, title_distance=9))
    assert call not in kept and result not in kept
    kept, _ = compacted(messages, Resolution(full_context_distance=1, summary_distance=5, title_distance=9))
    assert kept[-3:] == [call, result, messages[-1]]


def test_the_newest_message_always_stays() -> None:
    messages = conversation(3)
    kept, hidden = compacted(messages, Resolution(full_context_distance=0, summary_distance=0, title_distance=0))
    assert kept[-1] == messages[-1] and hidden == 5


def test_responses_items_keep_a_function_call_its_output_and_the_reasoning_before_it_together() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    call = {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "42"}
    after = {"role": "assistant", "content": [{"type": "output_text", "text": "It is 42. Anything else?"}]}
    items = [*conversation(3), reasoning, call, output, after, {"role": "user", "content": "Thanks. What next?"}]
    kept, hidden = compacted(
        items, Resolution(full_context_distance=0, summary_distance=5, title_distance=9), RESPONSES
    )
    assert not {id(reasoning), id(call), id(output)} & {id(k) for k in kept}
    assert hidden == 3 and {"role": "assistant", "content": "It is 42."} in kept  # the answer stands alone
    assert kept[0] == items[0] and "3 earlier messages" in kept[1]["content"]
    assert kept[2]["content"] == "Question 0 is long. It goes on and on about storage plans."  # a title
    kept, hidden = compacted(
        items, Resolution(full_context_distance=2, summary_distance=5, title_distance=9), RESPONSES
    )
    assert kept[-5:] == [reasoning, call, output, after, items[-1]] and hidden == 0


def test_anthropic_messages_keep_a_tool_use_with_its_result_and_the_note_is_the_first_user_message() -> None:
    def text(role: str, words: str) -> dict[str, Any]:
        return {"role": role, "content": [{"type": "text", "text": words}]}

    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "42"}]}
    messages = [
        text("user", "First question. It is long."),
        text("assistant", "First answer. Also long."),
        text("user", "Look it up. Please."),
        use,
        result,
        text("assistant", "It is 42. Done."),
        text("user", "Thanks. What next?"),
    ]
    kept, hidden = compacted(
        messages, Resolution(full_context_distance=1, summary_distance=3, title_distance=3), ANTHROPIC
    )
    assert hidden == 4 and use not in kept and result not in kept
    assert kept[0] == {
        "role": "user",
        "content": "[4 earlier messages of this conversation are left out to fit the model's window]",
    }
    assert kept[1:] == [{"role": "user", "content": "Look it up."}, *messages[-2:]]
    kept, hidden = compacted(
        messages, Resolution(full_context_distance=2, summary_distance=3, title_distance=3), ANTHROPIC
    )
    assert kept[-4:] == [use, result, *messages[-2:]]
