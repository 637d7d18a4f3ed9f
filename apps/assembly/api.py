"""Agent API for context assembly and decision traces."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiTypes, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.assembly.errors import TRACE_NOT_FOUND
from apps.assembly.models import AssemblyRecord
from apps.assembly.params import ContextParams
from apps.assembly.serializers import ContextOutput, PreviewOutput
from apps.assembly.services import context_assemble, context_preview, records_flush
from apps.assembly.trace_sections import trace_sections
from apps.core.client_gone import client_gone
from apps.core.errors import NotFound
from apps.core.fair_share import workspace_slot
from apps.core.renderers import OrjsonRenderer
from apps.core.serializers import FiniteFloatField, FloatVectorField, StrictSerializer
from apps.engine.format import FORMATS
from apps.layers.models import ItemKind
from apps.workspaces.authentication import api_key_of, workspace_of
from apps.workspaces.models import Scope


def arrived(request: Request) -> float | None:
    """When the request arrived (perf_counter, stamped by the first middleware): deadlines count from it."""
    value = request.META.get("ca.arrived")
    return value if isinstance(value, float) else None


def params_from(v: dict[str, Any]) -> ContextParams:
    """ContextParams from a validated ContextApi.Input payload (shared by the streaming endpoints)."""
    return ContextParams(
        layer_id=v["layer"],
        layer_external_id=v["layer_external_id"],
        query=v["query"],
        query_vector=v["query_vector"],
        token_budget=v["token_budget"],
        model=v["model"],
        profile=v["profile"],
        format=v["format"],
        kinds=tuple(v["kinds"]),
        types=tuple(v["types"]),
        since=v["since"],
        until=v["until"],
        min_confidence=v["min_confidence"],
        group_id=v["group_id"],
        agent_type=v["agent_type"],
        iteration=v["iteration"],
        conversation_id=v["conversation_id"],
        message_id=v.get("message"),
        context_window=v["context_window"],
        tokens_used=v["tokens_used"],
        ranking=v["ranking"],
        template=v["template"],
        expand_related=v["expand_related"],
        error=v["error"],
        timeout_ms=v["timeout_ms"],
        user=v.get("user", ""),
        include_superseded=v.get("include_superseded", False),
    )


class ContextApi(APIView):
    required_scope = Scope.READ  # a query: it changes nothing a client owns
    renderer_classes = [OrjsonRenderer]

    @extend_schema_serializer(component_name="ContextRequest")
    class Input(StrictSerializer):
        layer = serializers.IntegerField(required=False, allow_null=True, default=None)
        layer_external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        query = serializers.CharField(
            max_length=20_000, required=False, allow_blank=True, default="", trim_whitespace=False
        )
        query_vector = FloatVectorField(max_length=8192, required=False, allow_null=True, default=None)
        token_budget = serializers.IntegerField(
            required=False,
            allow_null=True,
            default=None,
            help_text="1..MAX_TOKEN_BUDGET; the range is checked by the service (apps/assembly/resolve.py)",
        )
        model = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
        profile = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
        format = serializers.ChoiceField(choices=FORMATS, required=False, allow_null=True, default=None)
        kinds = serializers.ListField(
            child=serializers.ChoiceField(choices=ItemKind.choices), required=False, default=list, max_length=10
        )
        types = serializers.ListField(
            child=serializers.CharField(max_length=32), required=False, default=list, max_length=50
        )
        since = serializers.DateTimeField(required=False, allow_null=True, default=None)
        until = serializers.DateTimeField(required=False, allow_null=True, default=None)
        min_confidence = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True, default=None)
        group_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        agent_type = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
        iteration = serializers.IntegerField(
            min_value=1,
            max_value=10_000,
            required=False,
            allow_null=True,
            default=None,
            help_text="The agent's attempt at its task (1 for the first); recorded for consumption tracking",
        )
        conversation_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        message = serializers.IntegerField(
            min_value=1,
            required=False,
            allow_null=True,
            default=None,
            help_text="Compile from this message: the conversation window is its branch, back from it",
        )
        context_window = serializers.IntegerField(
            min_value=1, max_value=settings.MAX_TOKEN_BUDGET * 10, required=False, allow_null=True, default=None
        )
        tokens_used = serializers.IntegerField(min_value=0, required=False, allow_null=True, default=None)
        ranking = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
        template = serializers.CharField(max_length=100, required=False, allow_null=True, default=None)
        expand_related = serializers.IntegerField(
            min_value=0, max_value=settings.MAX_RELATED_DEPTH, required=False, default=0
        )
        user = serializers.CharField(
            max_length=150,
            required=False,
            allow_blank=True,
            default="",
            help_text="Username of a workspace member: layer summaries personalized for them where they exist",
        )
        timeout_ms = serializers.IntegerField(
            min_value=0,
            max_value=60_000,
            required=False,
            allow_null=True,
            default=None,
            help_text="0 waits for the whole context",
        )
        error = serializers.CharField(
            max_length=20_000, required=False, allow_blank=True, default="", trim_whitespace=False
        )
        include_superseded = serializers.BooleanField(
            required=False,
            default=False,
            help_text="Keep items a newer item supersedes among the candidates (left out by default, "
            "with the trace reason `superseded`)",
        )

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs["tokens_used"] is not None and attrs["context_window"] is None:
                raise serializers.ValidationError({"tokens_used": "give context_window with tokens_used"})
            if attrs["since"] is not None and attrs["until"] is not None and attrs["since"] > attrs["until"]:
                raise serializers.ValidationError({"since": "since must not be after until"})
            return attrs

    Output = ContextOutput

    @extend_schema(request=Input, responses=Output)
    def post(self, request: Request) -> Response:
        # The whole request after authentication runs in its process's slot for the workspace
        # (apps/core/fair_share.py), so a request waiting for its turn costs no interpreter time.
        with workspace_slot(workspace_id=workspace_of(request).pk, what="context assembly"):
            return self._post(request)

    def _post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        params = params_from(data.validated_data)
        result = context_assemble(
            workspace=workspace_of(request),
            params=params,
            api_key=api_key_of(request),
            started=arrived(request),
            cancelled=client_gone(request),
        )
        return Response(self.Output(result).data)


class ContextPreviewApi(APIView):
    """Exactly what POST /context/ returns for the same body, plus the trace and a what-if table."""

    required_scope = Scope.READ  # a query: it changes nothing a client owns
    renderer_classes = [OrjsonRenderer]
    Output = PreviewOutput

    @extend_schema(request=ContextApi.Input, responses=Output)
    def post(self, request: Request) -> Response:
        with workspace_slot(workspace_id=workspace_of(request).pk, what="context preview"):  # as POST /context/
            return self._post(request)

    def _post(self, request: Request) -> Response:
        data = ContextApi.Input(data=request.data)
        data.is_valid(raise_exception=True)
        params = params_from(data.validated_data)
        preview = context_preview(
            workspace=workspace_of(request),
            params=params,
            api_key=api_key_of(request),
            started=arrived(request),
            cancelled=client_gone(request),
        )
        return Response(self.Output(preview).data)


class TraceApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, trace_id: str) -> Response:
        try:
            key = uuid.UUID(trace_id)
        except ValueError as exc:
            raise NotFound("trace not found", code=TRACE_NOT_FOUND) from exc
        records_flush()  # an answer just given may still have its record queued
        record = AssemblyRecord.objects.filter(workspace=workspace_of(request), trace_id=key).first()
        if record is None:
            raise NotFound("trace not found", code=TRACE_NOT_FOUND)
        trace_id = str(record.trace_id)
        sections = {name: section(record.workspace_id, trace_id) for name, section in trace_sections.items()}
        return Response(
            {
                "trace_id": str(record.trace_id),
                "created_at": record.created_at,
                "layer": record.layer_id,
                "origin": record.origin,
                "request": record.request,
                "model": record.model,
                "encoding": record.encoding,
                "tokens_used": record.tokens_used,
                "token_budget": record.token_budget,
                "items_included": record.items_included,
                "candidates_considered": record.candidates_considered,
                "overflow_count": record.overflow_count,
                "truncated_count": record.truncated_count,
                "elapsed_ms": record.elapsed_ms,
                "assembly_cache_hit": record.assembly_cache_hit,
                "embedding_cache_hit": record.embedding_cache_hit,
                "timings": record.timings,
                "warnings": record.warnings,
                "sampled": record.sampled,
                "consumption": {  # agents report use with POST /consumption/
                    "session": record.session,
                    "group_id": record.group_id,
                    "agent_type": record.agent_type,
                    "iteration": record.iteration,
                    "injected_packages": record.injected_packages,
                    "used_packages": record.used_packages,
                    "reported_at": record.consumption_reported_at,
                },
                "trace": record.trace,
                **sections,
            }
        )
