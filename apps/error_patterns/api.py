"""Agent API for attempts and error patterns: one class per operation, input validated at the edge."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import MISSING_LAYER, InvalidInput
from apps.core.field_errors import INVALID_LAYER, field_code
from apps.core.pagination import DefaultPagination
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.error_patterns import selectors, services
from apps.error_patterns.models import Attempt, ErrorPattern, Outcome
from apps.error_patterns.signature import error_signature
from apps.layers.models import Layer, LayerKind
from apps.layers.selectors import layer_get, layer_get_by_external_id
from apps.redaction.services import text_redact
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import Scope, Workspace

MAX_TEXT = 20_000


class PatternOutput(serializers.ModelSerializer):
    class Meta:
        model = ErrorPattern
        fields = [
            "id",
            "signature",
            "error_excerpt",
            "solution",
            "confidence",
            "occurrences",
            "failures",
            "first_seen",
            "last_seen",
        ]


class AttemptOutput(serializers.ModelSerializer):
    class Meta:
        model = Attempt
        fields = [
            "id",
            "layer",
            "agent_type",
            "group_id",
            "iteration",
            "outcome",
            "error",
            "signature",
            "solution",
            "pattern",
            "created_at",
        ]


class AttemptRecordedOutput(AttemptOutput):
    """The attempt, the pattern it captured or confirmed (or null), and the patterns whose hint it counted against."""

    captured = PatternOutput(allow_null=True, read_only=True)
    new_pattern = serializers.BooleanField(read_only=True)
    lowered = serializers.ListField(child=serializers.IntegerField(), read_only=True)

    class Meta(AttemptOutput.Meta):
        fields = [*AttemptOutput.Meta.fields, "captured", "new_pattern", "lowered"]


def _session(workspace: Workspace, layer_id: int | None, external_id: str | None) -> Layer:
    if layer_id is not None:
        layer = layer_get(workspace=workspace, layer_id=layer_id)
    elif external_id:
        layer = layer_get_by_external_id(workspace=workspace, external_id=external_id, kind=LayerKind.SESSION)
    else:
        raise InvalidInput("give layer or layer_external_id", code=MISSING_LAYER)
    if layer.kind != LayerKind.SESSION:
        raise InvalidInput(
            f"attempts are reported on a session layer; layer {layer.pk} is a {layer.kind}", code=INVALID_LAYER
        )
    return layer


def _float_param(request: Request, name: str) -> float | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError as exc:
        raise InvalidInput(f"{name} must be a number", code=field_code(name)) from exc
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be within 0..1", code=field_code(name))
    return value


class AttemptListCreateApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="AttemptCreate")
    class Input(StrictSerializer):
        layer = serializers.IntegerField(required=False, allow_null=True, default=None)
        layer_external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        group_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        agent_type = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
        iteration = serializers.IntegerField(
            min_value=0, max_value=1_000_000, required=False, allow_null=True, default=None
        )
        outcome = serializers.ChoiceField(choices=Outcome.choices)
        error = serializers.CharField(
            max_length=MAX_TEXT, required=False, allow_blank=True, default="", trim_whitespace=False
        )
        solution = serializers.CharField(
            max_length=MAX_TEXT, required=False, allow_blank=True, default="", trim_whitespace=False
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("layer", int, required=False, description="404 outside the workspace"),
            OpenApiParameter("group_id", str, required=False),
            OpenApiParameter("agent_type", str, required=False),
        ],
        responses=AttemptOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        raw_layer = request.query_params.get("layer")
        try:
            layer_id = int(raw_layer) if raw_layer else None
        except ValueError as exc:
            raise InvalidInput("layer must be an integer", code=INVALID_LAYER) from exc
        workspace = workspace_of(request)
        if layer_id is not None:  # a filter naming a layer answers like the layer's own route
            layer_get(workspace=workspace, layer_id=layer_id)
        attempts = selectors.attempts_list(
            workspace=workspace,
            layer_id=layer_id,
            group_id=request.query_params.get("group_id"),
            agent_type=request.query_params.get("agent_type"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(attempts, request, view=self)
        return paginator.get_paginated_response(AttemptOutput(page, many=True).data)

    @extend_schema(
        request=Input,
        responses={
            201: AttemptRecordedOutput,
        },
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v: dict[str, Any] = data.validated_data
        workspace = workspace_of(request)
        result = services.attempt_record(
            workspace=workspace,
            layer=_session(workspace, v["layer"], v["layer_external_id"]),
            outcome=v["outcome"],
            agent_type=v["agent_type"],
            group_id=v["group_id"],
            iteration=v["iteration"],
            error=v["error"],
            solution=v["solution"],
        )
        body = {
            **AttemptOutput(result.attempt).data,
            "captured": PatternOutput(result.captured).data if result.captured else None,
            "new_pattern": result.new_pattern,
            "lowered": list(result.lowered),
        }
        return Response(body, status=status.HTTP_201_CREATED)


class PatternListApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema(
        parameters=[
            OpenApiParameter("signature", str, required=False, description="substring of the signature"),
            OpenApiParameter("min_confidence", float, required=False),
            OpenApiParameter("confidence", float, required=False, description="same as min_confidence"),
            OpenApiParameter("max_confidence", float, required=False),
        ],
        responses=PatternOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        min_confidence = _float_param(request, "min_confidence")
        if min_confidence is None:  # not `or`: min_confidence=0 is a value
            min_confidence = _float_param(request, "confidence")
        patterns = selectors.patterns_list(
            workspace=workspace_of(request),
            signature=(request.query_params.get("signature") or "").strip(),
            min_confidence=min_confidence,
            max_confidence=_float_param(request, "max_confidence"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(patterns, request, view=self)
        return paginator.get_paginated_response(PatternOutput(page, many=True).data)


class PatternDetailApi(APIView):
    @extend_schema(responses=PatternOutput)
    def get(self, request: Request, pattern_id: int) -> Response:
        pattern = selectors.pattern_get(workspace=workspace_of(request), pattern_id=pattern_id)
        return Response(PatternOutput(pattern).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, pattern_id: int) -> Response:
        pattern = selectors.pattern_get(workspace=workspace_of(request), pattern_id=pattern_id)
        services.pattern_delete(pattern=pattern)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MatchOutput(PatternOutput):
    similarity = serializers.FloatField()
    exact = serializers.BooleanField()

    class Meta(PatternOutput.Meta):
        fields = [*PatternOutput.Meta.fields, "similarity", "exact"]


class PatternMatchApi(APIView):
    """Known patterns for an error: the exact signature first, then the nearest by similarity."""

    required_scope = Scope.READ  # a query: it changes nothing a client owns

    @extend_schema_serializer(component_name="ErrorPatternMatch")
    class Input(StrictSerializer):
        error = serializers.CharField(max_length=MAX_TEXT, trim_whitespace=False)
        min_confidence = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True, default=None)
        limit = serializers.IntegerField(min_value=1, max_value=50, required=False, default=10)

    @extend_schema(
        request=Input,
        responses=inline_serializer(
            "ErrorPatternMatches", {"signature": serializers.CharField(), "matches": MatchOutput(many=True)}
        ),
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        workspace = workspace_of(request)
        signature = error_signature(text_redact(workspace_id=workspace.pk, text=v["error"]).text)
        matches = selectors.patterns_match(
            workspace_id=workspace.pk, signature=signature, min_confidence=v["min_confidence"], limit=v["limit"]
        )
        rows = []
        for similarity, pattern in matches:
            pattern.similarity = round(similarity, 4)  # type: ignore[attr-defined]
            pattern.exact = pattern.signature == signature  # type: ignore[attr-defined]
            rows.append(pattern)
        return Response({"signature": signature, "matches": MatchOutput(rows, many=True).data})
