"""Agent API: consumption reports, strategies and their feedback, and the stats for dashboards."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.consumption import selectors, services
from apps.consumption.stats import workspace_stats
from apps.core.pagination import DefaultPagination
from apps.layers.models import Item

MAX_USED = 1000


class ConsumptionApi(APIView):
    """An agent reports which of the packages injected by one assembly it actually used."""

    @extend_schema_serializer(component_name="ConsumptionReport")
    class Input(serializers.Serializer):
        trace_id = serializers.UUIDField(help_text="The trace_id of the context response")
        used = serializers.ListField(
            child=serializers.IntegerField(min_value=1),
            max_length=MAX_USED,
            allow_empty=True,
            help_text="Ids of the injected package items the agent used (empty: none of them)",
        )

    @extend_schema_serializer(component_name="ConsumptionRecorded")
    class Output(serializers.Serializer):
        trace_id = serializers.UUIDField()
        injected = serializers.ListField(child=serializers.IntegerField())
        used = serializers.ListField(child=serializers.IntegerField())
        ratio = serializers.FloatField(allow_null=True)
        reported_at = serializers.DateTimeField()
        duplicate = serializers.BooleanField(help_text="True when this exact report was already recorded")

    @extend_schema(request=Input, responses={200: Output})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        report = services.consumption_report(
            workspace=request.user.workspace,
            trace_id=data.validated_data["trace_id"],
            used=data.validated_data["used"],
        )
        out = {
            "trace_id": report.trace_id,
            "injected": report.injected,
            "used": report.used,
            "ratio": report.ratio,
            "reported_at": report.reported_at,
            "duplicate": report.duplicate,
        }
        return Response(self.Output(out).data)


class StrategyOutput(serializers.ModelSerializer):
    class Meta:
        model = Item
        fields = [
            "id",
            "layer",
            "title",
            "content",
            "external_id",
            "priority",
            "group_id",
            "agent_types",
            "source_refs",
            "helpfulness",
            "created_at",
        ]


class StrategyListApi(APIView):
    """Strategies are package items of type `strategy` (create them with /items/); most helpful first."""

    @extend_schema(
        parameters=[
            OpenApiParameter("group_id", OpenApiTypes.STR, description="Only this task group's strategies"),
            OpenApiParameter("agent_type", OpenApiTypes.STR, description="Only strategies for this agent type"),
        ],
        responses=StrategyOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        strategies = selectors.strategies_list(
            workspace=request.user.workspace,
            group_id=request.query_params.get("group_id", ""),
            agent_type=request.query_params.get("agent_type", ""),
        )
        paginator = DefaultPagination()
        page = paginator.paginate_queryset(strategies, request, view=self)
        return paginator.get_paginated_response(StrategyOutput(page, many=True).data)


class StrategyFeedbackApi(APIView):
    @extend_schema_serializer(component_name="StrategyFeedback")
    class Input(serializers.Serializer):
        helpful = serializers.BooleanField(help_text="true raises the helpfulness by one step, false lowers it")

    @extend_schema(request=Input, responses={200: StrategyOutput})
    def post(self, request: Request, strategy_id: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        strategy = services.strategy_feedback(
            workspace=request.user.workspace, strategy_id=strategy_id, helpful=data.validated_data["helpful"]
        )
        return Response(StrategyOutput(strategy).data)


class StatsApi(APIView):
    """Figures for the dashboards: package consumption (SC-003) and attempts (SC-001, SC-004)."""

    @extend_schema(
        parameters=[OpenApiParameter("agent_type", OpenApiTypes.STR, description="Only this agent type's figures")],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        agent_type = request.query_params.get("agent_type")
        return Response(workspace_stats(workspace=request.user.workspace, agent_type=agent_type or None))
