"""Agent API of the conversation graph: branches, threads, importance, communities, history, export/import."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from apps.conversations import selectors, services, transfer
from apps.conversations.communities import communities_refresh
from apps.conversations.graph_input import GraphInput
from apps.conversations.models import Community
from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_KIND, INVALID_LIMIT, INVALID_OFFSET
from apps.core.serializers import StrictSerializer
from apps.layers import selectors as layer_selectors
from apps.layers.api import parse_int
from apps.workspaces.authentication import workspace_of


class _ForkOut(serializers.Serializer):
    id = serializers.IntegerField()
    children = serializers.ListField(child=serializers.IntegerField())


class _BranchOut(serializers.Serializer):
    leaf = serializers.IntegerField()
    root = serializers.IntegerField()  # type: ignore[assignment]  # a field named root: the stubs type Field.root
    fork = serializers.IntegerField(allow_null=True, help_text="the last message on the path with two replies or more")
    length = serializers.IntegerField(help_text="messages from the root to the leaf")
    joins = serializers.IntegerField(
        allow_null=True, help_text="the message of an earlier branch this one continues from (null: a new root)"
    )
    joins_branch = serializers.IntegerField(allow_null=True, help_text="the leaf of the branch that holds `joins`")
    tail = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="the messages after `joins`, to the leaf (no earlier branch has them)",
    )
    last_at = serializers.DateTimeField()
    preview = serializers.CharField()


@extend_schema_serializer(component_name="Branches")
class BranchesOut(serializers.Serializer):
    layer = serializers.IntegerField()
    messages = serializers.IntegerField()
    roots = serializers.ListField(child=serializers.IntegerField())
    forks = _ForkOut(many=True)
    count = serializers.IntegerField(help_text="branches in all pages")
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    branches = _BranchOut(many=True)


class BranchesApi(APIView):
    """A page of a layer's conversation branches (root → leaf), newest leaf last, with its forks.

    Each message is listed once in all pages: a branch names the part no earlier branch holds
    (`tail`) and where it joins one (`joins`, `joins_branch`); `GET /items/{leaf}/thread/` gives a
    branch's whole path."""

    @extend_schema(
        parameters=[
            OpenApiParameter("offset", int, description="branches to skip (default 0)"),
            OpenApiParameter(
                "limit",
                int,
                description=f"branches per page (default {selectors.BRANCHES_PAGE}, "
                f"at most {selectors.BRANCHES_MAX_PAGE})",
            ),
        ],
        responses=BranchesOut,
    )
    def get(self, request: Request, layer_id: int) -> Response:
        layer = layer_selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        limit = parse_int(request.query_params.get("limit"), name="limit")
        limit = selectors.BRANCHES_PAGE if limit is None else limit
        if not 1 <= limit <= selectors.BRANCHES_MAX_PAGE:
            raise InvalidInput(f"limit must be 1..{selectors.BRANCHES_MAX_PAGE}", code=INVALID_LIMIT)
        offset = parse_int(request.query_params.get("offset"), name="offset") or 0
        if offset < 0:
            raise InvalidInput("offset must be 0 or more", code=INVALID_OFFSET)
        body = selectors.branches_list(layer=layer, offset=offset, limit=limit)
        url = request.build_absolute_uri()
        after = offset + limit
        body["next"] = replace_query_param(url, "offset", after) if after < body["count"] else None
        body["previous"] = replace_query_param(url, "offset", max(offset - limit, 0)) if offset > 0 else None
        return Response(body)


class ThreadApi(APIView):
    """The thread through a message: its ancestors, itself, then the earliest child at each fork."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, item_id: int) -> Response:
        item = layer_selectors.item_get(workspace=workspace_of(request), item_id=item_id)
        if item.kind != "message":
            raise InvalidInput("only messages have threads", code=INVALID_KIND)
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
                "summary_provider": c.summary_provider,
                "summary_note": c.summary_note,
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


class ImportedOutput(serializers.Serializer):
    layer = serializers.IntegerField(help_text="The new session layer's id")
    name = serializers.CharField()
    messages = serializers.IntegerField(help_text="How many messages were imported")


class ImportApi(APIView):
    """A new session under `parent` from an export (refs, links, summaries and communities as given)."""

    @extend_schema_serializer(component_name="ConversationImport")
    class Input(StrictSerializer):
        parent = serializers.IntegerField()  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
        name = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
        graph = GraphInput()

    @extend_schema(request=Input, responses={201: ImportedOutput})
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
