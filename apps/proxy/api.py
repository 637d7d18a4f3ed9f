"""`/api/v1/upstreams/` and `/api/v1/proxy/settings/`: where the proxy forwards, for admin keys only.

A key is write-only: no answer carries it (`has_key` says whether one is stored).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.serializers import StrictSerializer
from apps.layers.selectors import layer_get
from apps.proxy.models import Upstream, WireFormat
from apps.proxy.selectors import proxy_default_parent, upstream_get, upstreams_list
from apps.proxy.services import KEEP, proxy_settings_set, upstream_delete, upstream_set
from apps.proxy.upstream_keys import MAX_KEY_CHARS
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import Scope


class UpstreamOutput(serializers.ModelSerializer):
    has_key = serializers.BooleanField(read_only=True, help_text="A key is stored (it is never shown)")

    class Meta:
        model = Upstream
        fields = ["kind", "base_url", "has_key", "created_at", "updated_at"]


class UpstreamListApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema(responses=UpstreamOutput(many=True))
    def get(self, request: Request) -> Response:
        return Response(UpstreamOutput(upstreams_list(workspace=workspace_of(request)), many=True).data)


@extend_schema(parameters=[OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=WireFormat.values)])
class UpstreamApi(APIView):
    """One upstream per wire format (`openai`: any OpenAI-compatible server; `anthropic`)."""

    required_scope = Scope.ADMIN

    @extend_schema_serializer(component_name="UpstreamSet")
    class Input(StrictSerializer):
        base_url = serializers.CharField(
            max_length=500, required=False, help_text="As the SDK takes it, e.g. https://api.openai.com/v1"
        )
        key = serializers.CharField(
            max_length=MAX_KEY_CHARS,
            required=False,
            allow_null=True,
            write_only=True,
            help_text="Stored encrypted and never shown again; null removes it",
        )

    @extend_schema(responses=UpstreamOutput)
    def get(self, request: Request, kind: str) -> Response:
        return Response(UpstreamOutput(upstream_get(workspace=workspace_of(request), kind=kind)).data)

    @extend_schema(request=Input, responses={200: UpstreamOutput, 201: UpstreamOutput})
    def put(self, request: Request, kind: str) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v: dict[str, Any] = data.validated_data
        upstream, created = upstream_set(
            workspace=workspace_of(request), kind=kind, base_url=v.get("base_url", KEEP), key=v.get("key", KEEP)
        )
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(UpstreamOutput(upstream).data, status=answer)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, kind: str) -> Response:
        upstream_delete(workspace=workspace_of(request), kind=kind)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProxySettingsApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema_serializer(component_name="ProxySettings")
    class Input(StrictSerializer):
        default_parent = serializers.IntegerField(
            allow_null=True, help_text="The layer new sessions go under when a call names no X-Context-Parent"
        )

    class Output(serializers.Serializer):
        default_parent = serializers.IntegerField(allow_null=True)

    @extend_schema(responses=Output)
    def get(self, request: Request) -> Response:
        parent = proxy_default_parent(workspace_id=workspace_of(request).pk)
        return Response(self.Output({"default_parent": parent.pk if parent else None}).data)

    @extend_schema(request=Input, responses=Output)
    def put(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_of(request)
        layer_id = data.validated_data["default_parent"]
        parent = None if layer_id is None else layer_get(workspace=workspace, layer_id=layer_id)
        proxy_settings_set(workspace=workspace, default_parent=parent)
        return Response(self.Output({"default_parent": layer_id}).data)
