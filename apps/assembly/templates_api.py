"""Agent API for a workspace's own chunk templates."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.assembly.models import OutputTemplate
from apps.assembly.selectors import template_get, templates_list
from apps.assembly.services.templates import (
    MAX_BODY_CHARS,
    NAME_PATTERN,
    template_create,
    template_delete,
    template_update,
)
from apps.core.serializers import StrictSerializer
from apps.workspaces.authentication import workspace_of


class TemplateOutput(serializers.ModelSerializer):
    class Meta:
        model = OutputTemplate
        fields = ["name", "body", "by_type", "created_at", "updated_at"]


# The shapes; every rule is `template_errors` (in the services), which the templates page shows all at once.
@extend_schema_serializer(component_name="TemplateWrite")
class TemplateInput(StrictSerializer):
    name = serializers.RegexField(NAME_PATTERN, max_length=100)
    body = serializers.CharField(max_length=MAX_BODY_CHARS, trim_whitespace=False)
    by_type = serializers.DictField(
        child=serializers.CharField(max_length=MAX_BODY_CHARS, trim_whitespace=False), required=False, default=dict
    )


class TemplateListCreateApi(APIView):
    @extend_schema(responses=TemplateOutput(many=True))
    def get(self, request: Request) -> Response:
        templates = templates_list(workspace=workspace_of(request))
        return Response(TemplateOutput(templates, many=True).data)

    @extend_schema(request=TemplateInput, responses={201: TemplateOutput})
    def post(self, request: Request) -> Response:
        data = TemplateInput(data=request.data)
        data.is_valid(raise_exception=True)
        template = template_create(workspace=workspace_of(request), **data.validated_data)
        return Response(TemplateOutput(template).data, status=status.HTTP_201_CREATED)


class TemplateDetailApi(APIView):
    @extend_schema(responses=TemplateOutput)
    def get(self, request: Request, name: str) -> Response:
        return Response(TemplateOutput(template_get(workspace=workspace_of(request), name=name)).data)

    @extend_schema(request=TemplateInput, responses=TemplateOutput)
    def put(self, request: Request, name: str) -> Response:
        template = template_get(workspace=workspace_of(request), name=name)
        data = TemplateInput(data={**request.data, "name": name} if isinstance(request.data, dict) else request.data)
        data.is_valid(raise_exception=True)
        template = template_update(
            template=template, body=data.validated_data["body"], by_type=data.validated_data["by_type"]
        )
        return Response(TemplateOutput(template).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        template_delete(template=template_get(workspace=workspace_of(request), name=name))
        return Response(status=status.HTTP_204_NO_CONTENT)
