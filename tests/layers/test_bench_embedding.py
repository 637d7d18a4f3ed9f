"""bench_embedding: a small real run with the local model, in a child process per thread count."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def test_it_prints_items_and_tokens_per_second_for_each_thread_count_and_batch() -> None:
    out = io.StringIO()
    call_command("bench_embedding", items=8, threads="1", batch="4,8", stdout=out)
    rows = re.findall(r"^ +1 +(\d+) +([\d.]+) +(\d+)$", out.getvalue(), re.MULTILINE)
    assert [batch for batch, _, _ in rows] == ["4", "8"], out.getvalue()
    assert all(float(items) > 0 and int(tokens) > 0 for _, items, tokens in rows)


@pytest.mark.parametrize("value", ["0", "two", ""])
def test_it_refuses_a_bad_list(value: str) -> None:
    with pytest.raises(CommandError):
        call_command("bench_embedding", batch=value, stdout=io.StringIO())
