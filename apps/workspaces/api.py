"""Agent API for the key's workspace: status at a glance and API key management (admin-scoped keys only)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiTypes, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import NotFound
from apps.core.serializers import StrictSerializer
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import ApiKey, Scope
from apps.workspaces.selectors import workspace_status
from apps.workspaces.services import api_key_create, api_key_revoke


class StatusApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        return Response(workspace_status(workspace=workspace_of(request)))


class ApiKeyOutput(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]


class ApiKeyListCreateApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema_serializer(component_name="ApiKeyCreate")
    class Input(StrictSerializer):
        name = serializers.CharField(max_length=100)
        scopes = serializers.ListField(
            child=serializers.ChoiceField(choices=Scope.choices), required=False, allow_empty=False, max_length=3
        )

    @extend_schema(responses=ApiKeyOutput(many=True))
    def get(self, request: Request) -> Response:
        keys = ApiKey.objects.filter(workspace=workspace_of(request)).order_by("id")
        return Response(ApiKeyOutput(keys, many=True).data)

    @extend_schema(request=Input, responses={201: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        created = api_key_create(workspace=workspace_of(request), name=v["name"], scopes=v.get("scopes"))
        body = dict(ApiKeyOutput(created.api_key).data, key=created.secret)
        return Response(body, status=status.HTTP_201_CREATED)


class ApiKeyRevokeApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema(request=None, responses=ApiKeyOutput)
    def post(self, request: Request, key_id: int) -> Response:
        key = ApiKey.objects.filter(workspace=workspace_of(request), pk=key_id).first()
        if key is None:
            raise NotFound("API key not found", code="api_key_not_found")
        return Response(ApiKeyOutput(api_key_revoke(api_key=key)).data)
