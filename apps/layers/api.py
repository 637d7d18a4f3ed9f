"""Agent API for layers and items: one class per operation, input validated at the edge."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import BooleanField, ExpressionWrapper, Q
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_PARENT, field_code
from apps.core.json_fields import JsonObjectField
from apps.core.pagination import DefaultPagination
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.layers import selectors, services
from apps.layers.duplicates import ON_DUPLICATE
from apps.layers.models import Item, ItemKind, Layer, LayerKind, Priority, Relationship, RelationshipKind
from apps.layers.relationships import relationship_create, relationship_delete
from apps.layers.services import ItemInput
from apps.layers.signals import item_annotations
from apps.workspaces.authentication import workspace_of


def parse_int(value: str | None, *, name: str) -> int | None:
    """A query-string integer, or a 400 with `invalid_<name>`."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise InvalidInput(f"{name} must be an integer", code=field_code(name)) from exc


class LayerOutput(serializers.ModelSerializer):
    class Meta:
        model = Layer
        fields = ["id", "kind", "name", "parent", "external_id", "created_at", "updated_at"]


class LayerListCreateApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="LayerCreate")
    class Input(StrictSerializer):
        kind = serializers.ChoiceField(choices=LayerKind.choices)
        name = serializers.CharField(max_length=200)
        parent = serializers.IntegerField(allow_null=True, required=False, default=None)  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
        external_id = serializers.CharField(max_length=200, allow_null=True, required=False, default=None)

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=LayerKind.values, description="Only layers of this kind"),
            OpenApiParameter("external_id", str, description="Only the layer(s) with this external id"),
            OpenApiParameter("parent", int, description="Only children of this layer (404 outside the workspace)"),
        ],
        responses=LayerOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        workspace = workspace_of(request)
        parent_id = parse_int(request.query_params.get("parent"), name="parent")
        if parent_id is not None:  # a filter naming a layer answers like the layer's own route
            selectors.layer_get(workspace=workspace, layer_id=parent_id)
        layers = selectors.layers_list(
            workspace=workspace,
            kind=request.query_params.get("kind") or None,
            external_id=request.query_params.get("external_id") or None,
            parent_id=parent_id,
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(layers, request, view=self)
        return paginator.get_paginated_response(LayerOutput(page, many=True).data)

    @extend_schema(request=Input, responses={201: LayerOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_of(request)
        parent_id = data.validated_data["parent"]
        parent = selectors.layer_get(workspace=workspace, layer_id=parent_id) if parent_id is not None else None
        layer = services.layer_create(
            workspace=workspace,
            kind=data.validated_data["kind"],
            name=data.validated_data["name"],
            parent=parent,
            external_id=data.validated_data["external_id"],
        )
        return Response(LayerOutput(layer).data, status=status.HTTP_201_CREATED)


class LayerDetailApi(APIView):
    @extend_schema_serializer(component_name="LayerUpdate")
    class Input(StrictSerializer):
        name = serializers.CharField(max_length=200, required=False)
        parent = serializers.IntegerField(required=False)  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
        external_id = serializers.CharField(max_length=200, allow_null=True, required=False)

    @extend_schema(responses=LayerOutput)
    def get(self, request: Request, layer_id: int) -> Response:
        layer = selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        return Response(LayerOutput(layer).data)

    @extend_schema(request=Input, responses=LayerOutput)
    def patch(self, request: Request, layer_id: int) -> Response:
        workspace = workspace_of(request)
        layer = selectors.layer_get(workspace=workspace, layer_id=layer_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        changes: dict[str, Any] = dict(data.validated_data)
        if "parent" in changes:
            changes["parent"] = selectors.layer_get(workspace=workspace, layer_id=changes["parent"])
        layer = services.layer_update(layer=layer, changes=changes)
        return Response(LayerOutput(layer).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, layer_id: int) -> Response:
        layer = selectors.layer_get(workspace=workspace_of(request), layer_id=layer_id)
        services.layer_delete(layer=layer)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ItemFields(StrictSerializer):
    """The writable fields of an item, shared by single, bulk and update requests."""

    kind = serializers.ChoiceField(choices=ItemKind.choices)
    type = serializers.CharField(max_length=32, required=False, allow_blank=True, default="")
    title = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")
    content = serializers.CharField(trim_whitespace=False)  # its limit is a 413 (items_create)
    external_id = serializers.CharField(max_length=200, required=False, allow_null=True, default=None)
    created_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    role = serializers.CharField(max_length=16, required=False, allow_blank=True, default="")
    parent = serializers.IntegerField(required=False, allow_null=True, default=None)  # type: ignore[assignment]  # a field named parent: the stubs type Field.parent as its serializer
    task_ids = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=100, required=False, default=list
    )
    confidence = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True, default=None)
    priority = serializers.ChoiceField(choices=Priority.choices, required=False, allow_blank=True, default="")
    group_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    agent_types = serializers.ListField(
        child=serializers.CharField(max_length=100), max_length=100, required=False, default=list
    )
    source_refs = serializers.ListField(
        child=serializers.CharField(max_length=1000), max_length=100, required=False, default=list
    )
    importance = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, default=0.5)
    pinned = serializers.BooleanField(required=False, default=False)
    metadata = JsonObjectField(required=False, default=dict)  # jsonb: NUL anywhere is a 400
    on_duplicate = serializers.ChoiceField(
        choices=ON_DUPLICATE,
        required=False,
        default="merge",
        help_text="merge (default): an item repeating one of its layer (same kind, type, title and content) "
        "is merged into it, counted in `seen_count`; keep: stored apart whatever it repeats",
    )
    supersedes = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        max_length=100,
        required=False,
        default=list,
        help_text="ids of items this one replaces: they leave contexts (trace reason `superseded`) but stay "
        "listed and found by the history tool",
    )


class ItemOutput(serializers.ModelSerializer):
    embedded = serializers.BooleanField(read_only=True)
    # From conversations' access counts (`signals.item_annotations`, applied by _with_embedded_flag);
    # a new item has not been served yet.
    access_count = serializers.SerializerMethodField()
    last_accessed_at = serializers.SerializerMethodField()

    def get_access_count(self, item: Item) -> int:
        return getattr(item, "served_count", None) or 0

    def get_last_accessed_at(self, item: Item) -> datetime | None:
        return getattr(item, "served_last", None)

    class Meta:
        model = Item
        fields = [
            "id",
            "layer",
            "kind",
            "type",
            "title",
            "content",
            "external_id",
            "token_count",
            "content_hash",
            "importance",
            "pinned",
            "metadata",
            "created_at",
            "updated_at",
            "role",
            "parent",
            "task_ids",
            "confidence",
            "priority",
            "group_id",
            "agent_types",
            "source_refs",
            "access_count",
            "last_accessed_at",
            "embedded",
            "seen_count",
            "merged_external_ids",
            "superseded_by",
        ]


def _with_embedded_flag(items: Any) -> Any:
    """Items with what ItemOutput shows beyond their own columns (one query: the higher apps'
    `item_annotations` join their rows, LEFT JOINs)."""
    return items.annotate(
        embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()), **item_annotations
    )


class ItemListCreateApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="ItemCreate")
    class Input(ItemFields):
        layer = serializers.IntegerField()

    @extend_schema(
        parameters=[
            OpenApiParameter("layer", int, description="Only items of this layer (404 outside the workspace)"),
            OpenApiParameter("kind", str, enum=ItemKind.values, description="Only items of this kind"),
            OpenApiParameter("type", str, description="Only items of this type"),
        ],
        responses=ItemOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        workspace = workspace_of(request)
        layer_id = parse_int(request.query_params.get("layer"), name="layer")
        if layer_id is not None:  # a filter naming a layer answers like the layer's own route
            selectors.layer_get(workspace=workspace, layer_id=layer_id)
        items = selectors.items_list(
            workspace=workspace,
            layer_id=layer_id,
            kind=request.query_params.get("kind") or None,
            type=request.query_params.get("type") or None,
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(_with_embedded_flag(items), request, view=self)
        return paginator.get_paginated_response(ItemOutput(page, many=True).data)

    @extend_schema(
        request=Input,
        responses={
            201: ItemOutput,
            200: OpenApiResponse(ItemOutput, description="merged into the item it repeats, shown as it is now"),
        },
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        layer = selectors.layer_get(workspace=workspace_of(request), layer_id=fields.pop("layer"))
        written = services.items_write(layer=layer, items=[ItemInput(**fields)])
        if written.merged:  # an existing item took it: answered as that item is now
            item = _with_embedded_flag(selectors.items_list(workspace=layer.workspace)).get(pk=written.items[0].pk)
            return Response(ItemOutput(item).data, status=status.HTTP_200_OK)
        (item,) = written.items
        item.embedded = False  # type: ignore[attr-defined]
        return Response(ItemOutput(item).data, status=status.HTTP_201_CREATED)


class ItemBulkCreateApi(APIView):
    @extend_schema_serializer(component_name="ItemBulkCreate")
    class Input(StrictSerializer):
        layer = serializers.IntegerField()
        # ListSerializer takes max_length since DRF 3.14; the stubs' BaseSerializer.__init__ lacks it.
        items = ItemFields(many=True, allow_empty=False, max_length=settings.BULK_MAX_ITEMS)  # type: ignore[call-arg]

    @extend_schema_serializer(component_name="ItemBulkCreated")
    class Output(serializers.Serializer):
        ids = serializers.ListField(
            child=serializers.IntegerField(), help_text="per item sent, the id of the item that holds it"
        )
        merged = serializers.ListField(
            child=serializers.IntegerField(),
            help_text="indexes of the items sent that were merged into an item they repeat (its id in `ids`)",
        )

    @extend_schema(request=Input, responses={201: Output})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        layer = selectors.layer_get(workspace=workspace_of(request), layer_id=data.validated_data["layer"])
        written = services.items_write(layer=layer, items=[ItemInput(**f) for f in data.validated_data["items"]])
        return Response(
            {"ids": [item.pk for item in written.items], "merged": list(written.merged)},
            status=status.HTTP_201_CREATED,
        )


class ItemDetailApi(APIView):
    @extend_schema_serializer(component_name="ItemUpdate")
    class Input(ItemFields):
        kind = None  # type: ignore[assignment]  # None removes the inherited field: the kind of an item never changes
        on_duplicate = None  # type: ignore[assignment]  # a write's choice, not the item's
        supersedes = None  # type: ignore[assignment]  # named on write, or by accepting a proposal
        content = serializers.CharField(trim_whitespace=False, required=False)

    @extend_schema(responses=ItemOutput)
    def get(self, request: Request, item_id: int) -> Response:
        workspace = workspace_of(request)
        selectors.item_get(workspace=workspace, item_id=item_id)
        item = _with_embedded_flag(selectors.items_list(workspace=workspace)).get(pk=item_id)
        return Response(ItemOutput(item).data)

    @extend_schema(request=Input, responses=ItemOutput)
    def patch(self, request: Request, item_id: int) -> Response:
        workspace = workspace_of(request)
        item = selectors.item_get(workspace=workspace, item_id=item_id)
        data = self.Input(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        changes = {key: value for key, value in data.validated_data.items() if key in request.data}
        if "parent" in changes:
            raise InvalidInput("a message's parent cannot change", code=INVALID_PARENT)
        services.item_update(item=item, changes=changes)
        item = _with_embedded_flag(selectors.items_list(workspace=workspace)).get(pk=item_id)
        return Response(ItemOutput(item).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, item_id: int) -> Response:
        item = selectors.item_get(workspace=workspace_of(request), item_id=item_id)
        services.item_delete(item=item)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RelationshipOutput(serializers.ModelSerializer):
    class Meta:
        model = Relationship
        fields = ["id", "source", "target", "kind", "weight", "created_at"]


class RelationshipListCreateApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="RelationshipCreate")
    class Input(StrictSerializer):
        source = serializers.IntegerField()  # type: ignore[assignment]  # a field named source: the stubs type Field.source
        target = serializers.IntegerField()
        kind = serializers.ChoiceField(choices=RelationshipKind.choices)
        weight = FiniteFloatField(min_value=0.0, max_value=1.0, required=False, default=1.0)

    @extend_schema(
        parameters=[
            OpenApiParameter("item", int, description="Only edges from or to this item (404 outside the workspace)"),
            OpenApiParameter("kind", str, enum=RelationshipKind.values, description="Only edges of this kind"),
        ],
        responses=RelationshipOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        workspace = workspace_of(request)
        item_id = parse_int(request.query_params.get("item"), name="item")
        if item_id is not None:
            selectors.item_get(workspace=workspace, item_id=item_id)
        edges = selectors.relationships_list(
            workspace=workspace, item_id=item_id, kind=request.query_params.get("kind") or None
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(edges, request, view=self)
        return paginator.get_paginated_response(RelationshipOutput(page, many=True).data)

    @extend_schema(request=Input, responses={201: RelationshipOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        edge = relationship_create(
            workspace=workspace_of(request),
            source_id=data.validated_data["source"],
            target_id=data.validated_data["target"],
            kind=data.validated_data["kind"],
            weight=data.validated_data["weight"],
        )
        return Response(RelationshipOutput(edge).data, status=status.HTTP_201_CREATED)


class RelationshipDetailApi(APIView):
    @extend_schema(responses=RelationshipOutput)
    def get(self, request: Request, relationship_id: int) -> Response:
        edge = selectors.relationship_get(workspace=workspace_of(request), relationship_id=relationship_id)
        return Response(RelationshipOutput(edge).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, relationship_id: int) -> Response:
        edge = selectors.relationship_get(workspace=workspace_of(request), relationship_id=relationship_id)
        relationship_delete(relationship=edge)
        return Response(status=status.HTTP_204_NO_CONTENT)
