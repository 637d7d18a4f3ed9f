"""`POST /api/v1/tokens/`: what a prompt costs in a model, counted before it is sent."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.serializers import StrictSerializer
from apps.tokens.services import TokenCount, tokens_count
from apps.workspaces.authentication import workspace_of

MAX_MESSAGES = 10_000
MAX_TOOLS = 1_000


class ChatMessageField(serializers.DictField):
    """A chat message as the OpenAI or Anthropic wire format sends it: `role`, `content` (a string or
    a list of parts), and optionally `name` and `tool_calls`."""


class TokensApi(APIView):
    """Count a text, or a chat request's messages and tools, in a model's tokenizer."""

    @extend_schema_serializer(component_name="TokenCountRequest")
    class Input(StrictSerializer):
        model = serializers.CharField(
            max_length=200, required=False, help_text="The model (catalogue name; unknown models are estimated)"
        )
        text = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
        messages = serializers.ListField(
            child=ChatMessageField(), required=False, max_length=MAX_MESSAGES, help_text="Chat messages"
        )
        tools = serializers.ListField(
            child=serializers.DictField(), required=False, max_length=MAX_TOOLS, help_text="Tool definitions"
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("text" in attrs) == ("messages" in attrs):
                raise serializers.ValidationError({"text": "give `text` or `messages` (with `tools`)"})
            if "tools" in attrs and "messages" not in attrs:
                raise serializers.ValidationError({"tools": "tools are counted with `messages`"})
            return attrs

    @extend_schema_serializer(component_name="TokenCount")
    class Output(serializers.Serializer):
        model = serializers.CharField()
        tokens = serializers.IntegerField(help_text="Exact, or the calibrated estimate when `exact` is false")
        encoding = serializers.CharField(help_text="The vocabulary counted in")
        exact = serializers.BooleanField()
        margin = serializers.FloatField(help_text="Share of a budget to keep free so that 99% of prompts fit")
        known = serializers.BooleanField(help_text="False: the model is not in the catalogue")
        context_window = serializers.IntegerField(allow_null=True)
        calls = serializers.IntegerField(help_text="Observed calls an estimate rests on (0: its starting values)")
        warnings = serializers.ListField(child=serializers.CharField())

    @extend_schema(request=Input, responses={200: Output})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        model = v.get("model") or settings.DEFAULT_MODEL
        count = tokens_count(
            workspace=workspace_of(request),
            model=model,
            text=v.get("text"),
            messages=v.get("messages"),
            tools=v.get("tools", []),
        )
        return Response(self.Output(_answer(count)).data)


def _answer(count: TokenCount) -> dict[str, Any]:
    warnings = []
    if not count.known:
        warnings.append(
            f"model {count.model!r} is not in the model catalogue; counted with {count.encoding}, estimated"
        )
    elif count.estimate_family:
        warnings.append(f"model {count.model!r} publishes no tokenizer; the count is estimated from {count.encoding}")
    if count.exact is False and not count.estimate_family:
        warnings.append("tool definitions and non-text parts are counted as JSON: the count is approximate")
    return {**count.__dict__, "warnings": warnings}
