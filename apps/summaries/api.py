"""Agent API for summaries: read a layer's summaries, force a regeneration, read/change its config."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import INVALID_FIELDS, InvalidInput
from apps.core.field_errors import INVALID_BODY
from apps.core.serializers import StrictSerializer
from apps.layers.selectors import layer_get
from apps.summaries import jobs, selectors
from apps.summaries.config import SummaryConfig, config_of, config_update
from apps.summaries.models import Depth, Personalization, SummaryJob
from apps.workspaces.authentication import workspace_of


class SummaryOutput(serializers.Serializer):
    depth = serializers.ChoiceField(choices=Depth.choices)
    text = serializers.CharField()
    token_count = serializers.IntegerField()
    source_hash = serializers.CharField()
    generated_at = serializers.DateTimeField()
    provider = serializers.CharField()
    stale = serializers.BooleanField()
    personalized = serializers.SerializerMethodField()
    personalization_ref = serializers.JSONField()

    def get_personalized(self, row: dict[str, Any]) -> bool:
        return row["personalized_for_id"] is not None


def _warnings(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    if any(r["stale"] for r in rows):
        out.append("stale: some summaries could not be regenerated and may be out of date")
    if any(r["provider"] == "truncated" for r in rows):
        out.append("degraded: some summaries are raw content truncated at a sentence boundary")
    return out


class JobOutput(serializers.Serializer):
    state = serializers.ChoiceField(choices=SummaryJob.State.choices)
    runs = serializers.IntegerField()
    last_error = serializers.CharField(allow_blank=True)
    requested_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class LayerSummariesApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("user", str, description="username of a member: their personalized summaries")],
        responses=inline_serializer(
            "LayerSummaries",
            {
                "layer": serializers.IntegerField(),
                "summaries": SummaryOutput(many=True),
                "warnings": serializers.ListField(child=serializers.CharField()),
                "job": JobOutput(allow_null=True, help_text="The latest background summarize job, if any"),
            },
        ),
    )
    def get(self, request: Request, layer_id: int) -> Response:
        workspace = workspace_of(request)
        layer = layer_get(workspace=workspace, layer_id=layer_id)
        username = request.query_params.get("user") or ""
        user = selectors.member_get(workspace_id=workspace.pk, username=username) if username else None
        rows = selectors.layer_summaries_get(layer_id=layer.pk, user_id=user.pk if user else None)
        return Response(
            {
                "layer": layer.pk,
                "summaries": SummaryOutput(rows, many=True).data,
                "warnings": _warnings(rows),
                "job": jobs.job_json(jobs.job_of(layer_id=layer.pk)),
            }
        )


SummarizeResult = inline_serializer(
    "SummarizeResult",
    {
        "layer": serializers.IntegerField(),
        "status": serializers.ChoiceField(choices=["generated", "skipped", "degraded", "pending"]),
        "reason": serializers.CharField(),
        "provider": serializers.CharField(),
        "readers": serializers.ListField(child=serializers.CharField()),
        "warnings": serializers.ListField(child=serializers.CharField()),
        "summaries": SummaryOutput(many=True),
        "job": JobOutput(allow_null=True, help_text="The background run that retries a failing LLM"),
    },
)


class LayerSummarizeApi(APIView):
    @extend_schema(request=None, responses={200: SummarizeResult, 202: SummarizeResult})
    def post(self, request: Request, layer_id: int) -> Response:
        """Regenerate now, even when the source is unchanged. A failing LLM is not waited for: the answer
        comes at once (202, `pending`, or `degraded` after one attempt) and `job` runs the retries."""
        layer = layer_get(workspace=workspace_of(request), layer_id=layer_id)
        requested = jobs.layer_summarize_request(layer=layer)
        result = requested.result
        rows = selectors.layer_summaries_get(layer_id=layer.pk)
        return Response(
            {
                "layer": layer.pk,
                "status": result.status,
                "reason": result.reason,
                "provider": result.provider,
                "readers": result.readers,
                "warnings": result.warnings,
                "summaries": SummaryOutput(rows, many=True).data,
                "job": jobs.job_json(requested.job),
            },
            status=202 if result.status == jobs.PENDING else 200,
        )


class ConfigOutput(serializers.Serializer):
    layer = serializers.IntegerField(source="layer_id")
    kind = serializers.CharField()
    update_interval_seconds = serializers.IntegerField()
    update_on_changes = serializers.IntegerField()
    personalization = serializers.ChoiceField(choices=Personalization.choices)
    personalized = serializers.BooleanField()
    skip_if_unchanged = serializers.BooleanField()
    changes_since_summary = serializers.IntegerField()
    last_summarized_at = serializers.DateTimeField(allow_null=True)


class LayerConfigApi(APIView):
    @extend_schema_serializer(component_name="LayerConfigUpdate")
    class Input(StrictSerializer):
        # This endpoint answered unknown fields with `invalid_fields` before `unknown_fields` existed
        # (tests/summaries/test_api.py holds clients to it); the same refusal, its older code.
        unknown_fields_code = INVALID_FIELDS

        update_interval_seconds = serializers.IntegerField(min_value=60, max_value=7 * 24 * 3600, required=False)
        update_on_changes = serializers.IntegerField(min_value=1, max_value=10_000, required=False)
        personalization = serializers.ChoiceField(choices=Personalization.choices, required=False)
        skip_if_unchanged = serializers.BooleanField(required=False)

    @extend_schema(responses=ConfigOutput)
    def get(self, request: Request, layer_id: int) -> Response:
        layer = layer_get(workspace=workspace_of(request), layer_id=layer_id)
        return Response(ConfigOutput(config_of(layer=layer)).data)

    @extend_schema(request=Input, responses=ConfigOutput)
    def put(self, request: Request, layer_id: int) -> Response:
        layer = layer_get(workspace=workspace_of(request), layer_id=layer_id)
        if not isinstance(request.data, dict):
            raise InvalidInput("the body must be a JSON object", code=INVALID_BODY)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        config: SummaryConfig = config_update(layer=layer, changes=dict(data.validated_data))
        return Response(ConfigOutput(config).data)
