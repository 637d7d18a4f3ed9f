"""The shape of an exported conversation graph, as `POST /api/v1/layers/import/` and the sessions page take it.

The shapes only; the graph's own rules (refs, parents, summaries, communities) are checked by
`transfer.graph_import`. The class names are the OpenAPI components' names: keep them.
"""

from __future__ import annotations

from rest_framework import serializers

from apps.conversations import transfer
from apps.conversations.models import CommunityKind
from apps.core.json_fields import JsonObjectField
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.layers.models import LayerKind, MessageRole


class _MessageIn(StrictSerializer):
    ref = serializers.CharField(max_length=50)
    parent = serializers.CharField(max_length=50, allow_null=True, required=False, default=None)  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
    role = serializers.ChoiceField(choices=MessageRole.choices)
    title = serializers.CharField(max_length=500, allow_blank=True, required=False, default="")
    content = serializers.CharField(max_length=200_000, trim_whitespace=False)
    external_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)
    task_ids = serializers.ListField(child=serializers.CharField(max_length=200), max_length=100, default=list)
    importance = FiniteFloatField(min_value=0.0, max_value=1.0, default=0.5)
    pinned = serializers.BooleanField(default=False)
    metadata = JsonObjectField(default=dict)
    created_at = serializers.DateTimeField()
    access_count = serializers.IntegerField(min_value=0, max_value=2**31 - 1, default=0)
    last_accessed_at = serializers.DateTimeField(allow_null=True, required=False, default=None)


class _SummaryIn(StrictSerializer):
    depth = serializers.ChoiceField(choices=["sentence", "paragraph", "detailed"])
    text = serializers.CharField(max_length=100_000)
    token_count = serializers.IntegerField(min_value=0)
    source_hash = serializers.CharField(max_length=64, allow_blank=True)
    generated_at = serializers.DateTimeField()
    provider = serializers.CharField(max_length=64, allow_blank=True)
    stale = serializers.BooleanField(default=False)


class _CommunityIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=CommunityKind.choices)
    key = serializers.CharField(max_length=200)
    title = serializers.CharField(max_length=500, allow_blank=True)
    summary = serializers.CharField(max_length=100_000, allow_blank=True)
    summary_tokens = serializers.IntegerField(min_value=0, default=0)
    first_at = serializers.DateTimeField()
    last_at = serializers.DateTimeField()
    members = serializers.ListField(child=serializers.CharField(max_length=50), max_length=100_000)


class _LayerIn(StrictSerializer):
    kind = serializers.ChoiceField(choices=[LayerKind.SESSION, LayerKind.MULTI_SESSION], default=LayerKind.SESSION)
    name = serializers.CharField(max_length=200)
    external_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)


class _GraphIn(StrictSerializer):
    format = serializers.ChoiceField(choices=[transfer.FORMAT])
    version = serializers.ChoiceField(choices=[transfer.VERSION])
    layer = _LayerIn()
    # ListSerializer takes max_length since DRF 3.14; the stubs' BaseSerializer.__init__ lacks it.
    messages = _MessageIn(many=True, max_length=50_000)  # type: ignore[call-arg]
    summaries = _SummaryIn(many=True, required=False, default=list, max_length=3)  # type: ignore[call-arg]
    communities = _CommunityIn(many=True, required=False, default=list, max_length=10_000)  # type: ignore[call-arg]


GraphInput = _GraphIn
