"""The wire shape of an assembled context, shared by the API, SSE, WebSocket and the pages.

The serializers declare the shape, once (the OpenAPI schema is generated from them);
`to_representation` is the function `apps.core.declared_json` compiles from those fields, because DRF's
per-field machinery costs milliseconds per response on the hot path. tests/assembly/test_output.py
checks that both give the same JSON.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.assembly.results import PreviewResult
from apps.core.declared_json import declared_json
from apps.engine import TraceEntry
from apps.engine.candidates import ORIGINS
from apps.engine.types import SOURCES


class RoundedFloatField(serializers.FloatField):
    """Scores to 6 decimals: more digits are noise, and the recency part moves with the clock."""

    json_expression = "round({}, 6)"  # the same, in `declared_json`'s compiled function

    def to_representation(self, value: float) -> float:  # type: ignore[override]  # the stubs say str
        return round(float(value), 6)


class ChunkOutput(serializers.Serializer):
    id = serializers.IntegerField(help_text="The item's id, or the layer's (summary) or pattern's (error_hint)")
    source = serializers.ChoiceField(choices=SOURCES)  # type: ignore[assignment]  # DRF pops declared fields off the class
    external_id = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    type = serializers.CharField()
    layer = serializers.IntegerField()
    layer_name = serializers.CharField()
    text = serializers.CharField(help_text="The chunk as it appears in `context`, at `depth`")
    depth = serializers.CharField(help_text="full | summary | title; summaries: detailed | paragraph | sentence")
    tokens = serializers.IntegerField()
    score = RoundedFloatField()
    truncated = serializers.BooleanField()
    pinned = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    confidence = serializers.FloatField(allow_null=True)


class OverflowOutput(serializers.Serializer):
    count = serializers.IntegerField(
        source="overflow_count", help_text="Candidates left out for the budget or a package limit"
    )
    message = serializers.CharField(source="overflow_message", help_text='"+N more available", empty when none')


class ContextOutput(serializers.Serializer):
    """`POST /api/v1/context/`; the SSE and WebSocket `chunk` events are `chunks`, `complete` the rest."""

    context = serializers.CharField()  # type: ignore[assignment]  # DRF pops declared fields off the class
    chunks = ChunkOutput(many=True)
    total_tokens = serializers.IntegerField(help_text="Exact count of `context` in `encoding`; <= token_budget")
    token_budget = serializers.IntegerField()
    truncated_count = serializers.IntegerField()
    overflow = OverflowOutput(source="*")
    zone = serializers.ChoiceField(choices=["normal", "soft_warning", "conservative", "wrap_up", "emergency"])
    warnings = serializers.ListField(child=serializers.CharField())
    trace_id = serializers.UUIDField()
    elapsed_ms = serializers.FloatField()
    model = serializers.CharField()
    encoding = serializers.CharField()
    tokens_estimated = serializers.BooleanField()
    format = serializers.CharField()
    cached = serializers.BooleanField()
    partial = serializers.BooleanField(help_text="The deadline passed and part of the context is missing")  # type: ignore[assignment]  # DRF pops declared fields off the class

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return context_json(instance)


class TraceEntryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField()  # type: ignore[assignment]  # DRF pops declared fields off the class
    external_id = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    type = serializers.CharField()
    layer = serializers.IntegerField()
    score = RoundedFloatField()
    parts = serializers.DictField(child=RoundedFloatField())
    decision = serializers.ChoiceField(choices=["included", "truncated", "excluded"])
    reason = serializers.CharField()
    depth = serializers.CharField()
    tokens = serializers.IntegerField()
    origin = serializers.ChoiceField(choices=["", *ORIGINS], help_text="where the candidate came from")
    room = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="over_budget: the tokens still free when it came up (it needed `tokens`); null otherwise",
    )
    superseded_by = serializers.IntegerField(
        allow_null=True,
        required=False,
        help_text="superseded: the id of the newer item that replaces it; null otherwise",
    )


class WhatIfOutput(serializers.Serializer):
    token_budget = serializers.IntegerField()
    tokens_used = serializers.IntegerField()
    items_included = serializers.IntegerField()
    truncated_count = serializers.IntegerField()


class PreviewOutput(ContextOutput):
    """`POST /api/v1/context/preview/`: the context's fields, plus every decision and a what-if table."""

    trace = TraceEntryOutput(many=True)
    what_if = WhatIfOutput(many=True)

    def to_representation(self, instance: Any) -> dict[str, Any]:
        return preview_json(instance)


context_json = declared_json(ContextOutput)  # the JSON of `ContextOutput` for a ContextResult
what_if_json = declared_json(WhatIfOutput)


def trace_json(entry: TraceEntry) -> dict[str, Any]:
    # Records keep `room` and `superseded_by` only where they are set.
    return {**entry.as_dict(), "room": entry.room, "superseded_by": entry.superseded_by}


def preview_json(preview: PreviewResult) -> dict[str, Any]:
    """The JSON of `PreviewOutput` for `preview`."""
    return {
        **context_json(preview.result),
        "trace": [trace_json(e) for e in preview.trace],
        "what_if": [what_if_json(row) for row in preview.what_if],
    }
