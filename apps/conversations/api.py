"""Agent API of the conversation graph: branches, threads, importance, communities, history, export/import."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.conversations import selectors, services, transfer
from apps.conversations.communities import communities_refresh
from apps.conversations.models import Community, CommunityKind
from apps.core.errors import InvalidInput
from apps.core.json_fields import JsonObjectField
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.layers import selectors as layer_selectors
from apps.layers.models import LayerKind, MessageRole
from apps.workspaces.authentication import workspace_of


class BranchesApi(APIView):
    """Every branch (root → leaf) of a layer's conversation, with its forks."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, layer_id: int) -> Response:
        layer = layer_selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        return Response(selectors.branches_list(layer=layer))


class ThreadApi(APIView):
    """The thread through a message: its ancestors, itself, then the earliest child at each fork."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, item_id: int) -> Response:
        item = layer_selectors.item_get(workspace=workspace_of(request), item_id=item_id)
        if item.kind != "message":
            raise InvalidInput("only messages have threads", code="invalid_kind")
        return Response(selectors.thread_of(item=item))


class ImportanceApi(APIView):
    @extend_schema_serializer(component_name="MessageImportance")
    class Input(StrictSerializer):
        important = serializers.BooleanField()

    @extend_schema(request=Input, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, item_id: int) -> Response:
        item = layer_selectors.item_get(workspace=workspace_of(request), item_id=item_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        item = services.message_mark_important(item=item, important=data.validated_data["important"])
        return Response(
            {"id": item.pk, "importance": item.importance, "importance_source": item.metadata.get("importance_source")}
        )


def _communities_body(communities: list[Community]) -> dict[str, Any]:
    members = selectors.community_members(communities=communities)
    return {
        "results": [
            {
                "id": c.pk,
                "kind": c.kind,
                "key": c.key,
                "title": c.title,
                "summary": c.summary,
                "summary_tokens": c.summary_tokens,
                "members": members[c.pk],
                "first_at": c.first_at,
                "last_at": c.last_at,
                "computed_at": c.computed_at,
            }
            for c in communities
        ]
    }


class CommunitiesApi(APIView):
    """A layer's task and topic communities; POST recomputes them now."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, layer_id: int) -> Response:
        layer = layer_selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        return Response(_communities_body(list(selectors.communities_list(layer=layer))))

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, layer_id: int) -> Response:
        layer = layer_selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        communities_refresh(layer_id=layer.pk, force=True)
        return Response(_communities_body(list(selectors.communities_list(layer=layer))))


class ExportApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, layer_id: int) -> Response:
        layer = layer_selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        return Response(transfer.graph_export(layer=layer))


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


class ImportApi(APIView):
    """A new session under `parent` from an export (refs, links, summaries and communities as given)."""

    @extend_schema_serializer(component_name="ConversationImport")
    class Input(StrictSerializer):
        parent = serializers.IntegerField()  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
        name = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        graph = _GraphIn()

    @extend_schema(request=Input, responses={201: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        workspace = workspace_of(request)
        parent = layer_selectors.layer_get(workspace=workspace, layer_id=v["parent"])
        layer = transfer.graph_import(
            workspace=workspace, parent=parent, graph=v["graph"], name=v["name"], external_id=v["external_id"]
        )
        return Response(
            {"layer": layer.pk, "name": layer.name, "messages": len(v["graph"]["messages"])},
            status=status.HTTP_201_CREATED,
        )
