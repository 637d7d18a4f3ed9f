"""Agent API: consumption reports, strategies and their feedback, and the stats for dashboards."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.consumption import selectors, services
from apps.consumption.stats import workspace_stats
from apps.core.pagination import DefaultPagination
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.layers.models import Item, Priority
from apps.layers.selectors import layer_get
from apps.workspaces.authentication import workspace_of

MAX_USED = 1000


class ConsumptionApi(APIView):
    """An agent reports which of the packages injected by one assembly it actually used."""

    @extend_schema_serializer(component_name="ConsumptionReport")
    class Input(StrictSerializer):
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
            workspace=workspace_of(request),
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


class StrategyListCreateApi(APIView):
    """Strategies are package items of type `strategy` (here or through /items/); most helpful first."""

    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="StrategyCreate")
    class Input(StrictSerializer):
        layer = serializers.IntegerField()
        title = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
        content = serializers.CharField(trim_whitespace=False)  # its limit is a 413 (items_create)
        external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        priority = serializers.ChoiceField(choices=Priority.choices, required=False, allow_blank=True, default="")
        group_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        agent_types = serializers.ListField(
            child=serializers.CharField(max_length=100), max_length=100, required=False, default=list
        )
        source_refs = serializers.ListField(
            child=serializers.CharField(max_length=1000), max_length=100, required=False, default=list
        )
        helpfulness = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, default=0.5)

    @extend_schema(request=Input, responses={201: StrategyOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        layer = layer_get(workspace=workspace_of(request), layer_id=fields.pop("layer"))
        helpfulness = fields.pop("helpfulness")
        strategy = services.strategy_create(layer=layer, fields=fields, helpfulness=helpfulness)
        return Response(StrategyOutput(strategy).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("group_id", OpenApiTypes.STR, description="Only this task group's strategies"),
            OpenApiParameter("agent_type", OpenApiTypes.STR, description="Only strategies for this agent type"),
        ],
        responses=StrategyOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        strategies = selectors.strategies_list(
            workspace=workspace_of(request),
            group_id=request.query_params.get("group_id", ""),
            agent_type=request.query_params.get("agent_type", ""),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(strategies, request, view=self)
        return paginator.get_paginated_response(StrategyOutput(page, many=True).data)


class StrategyFeedbackApi(APIView):
    @extend_schema_serializer(component_name="StrategyFeedback")
    class Input(StrictSerializer):
        helpful = serializers.BooleanField(help_text="true raises the helpfulness by one step, false lowers it")

    @extend_schema(request=Input, responses={200: StrategyOutput})
    def post(self, request: Request, strategy_id: int) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        strategy = services.strategy_feedback(
            workspace=workspace_of(request), strategy_id=strategy_id, helpful=data.validated_data["helpful"]
        )
        return Response(StrategyOutput(strategy).data)


class StatsApi(APIView):
    """Figures for the dashboards: package consumption and attempts."""

    @extend_schema(
        parameters=[OpenApiParameter("agent_type", OpenApiTypes.STR, description="Only this agent type's figures")],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        agent_type = request.query_params.get("agent_type")
        return Response(workspace_stats(workspace=workspace_of(request), agent_type=agent_type or None))
