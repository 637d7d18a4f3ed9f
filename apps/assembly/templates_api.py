"""Agent API for a workspace's own chunk templates (seed 003 req. 7)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.assembly.engine import BUILTIN_TEMPLATES, Template, TemplateError
from apps.assembly.models import OutputTemplate
from apps.core.errors import Conflict, InvalidInput, NotFound
from apps.core.serializers import StrictSerializer
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import Workspace


class TemplateOutput(serializers.ModelSerializer):
    class Meta:
        model = OutputTemplate
        fields = ["name", "body", "by_type", "created_at", "updated_at"]


@extend_schema_serializer(component_name="TemplateWrite")
class TemplateInput(StrictSerializer):
    name = serializers.RegexField(r"^[A-Za-z0-9_.-]{1,100}$", max_length=100)
    body = serializers.CharField(max_length=5000, trim_whitespace=False)
    by_type = serializers.DictField(
        child=serializers.CharField(max_length=5000, trim_whitespace=False), required=False, default=dict
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["name"] in BUILTIN_TEMPLATES:
            raise serializers.ValidationError({"name": f"{attrs['name']!r} is a built-in template"})
        if len(attrs["by_type"]) > 50:
            raise serializers.ValidationError({"by_type": "at most 50 type bodies"})
        try:
            Template(name=attrs["name"], body=attrs["body"], by_type=attrs["by_type"])
        except TemplateError as exc:
            raise InvalidInput(str(exc), code="invalid_template") from exc
        return attrs


def _get(workspace: Workspace, name: str) -> OutputTemplate:
    template = OutputTemplate.objects.filter(workspace=workspace, name=name).first()
    if template is None:
        raise NotFound(f"template {name!r} not found", code="template_not_found")
    return template


class TemplateListCreateApi(APIView):
    @extend_schema(responses=TemplateOutput(many=True))
    def get(self, request: Request) -> Response:
        templates = OutputTemplate.objects.filter(workspace=workspace_of(request)).order_by("name")
        return Response(TemplateOutput(templates, many=True).data)

    @extend_schema(request=TemplateInput, responses={201: TemplateOutput})
    def post(self, request: Request) -> Response:
        data = TemplateInput(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            with transaction.atomic():
                template = OutputTemplate.objects.create(workspace=workspace_of(request), **data.validated_data)
        except IntegrityError as exc:
            raise Conflict(f"template {data.validated_data['name']!r} exists", code="duplicate_template") from exc
        return Response(TemplateOutput(template).data, status=status.HTTP_201_CREATED)


class TemplateDetailApi(APIView):
    @extend_schema(responses=TemplateOutput)
    def get(self, request: Request, name: str) -> Response:
        return Response(TemplateOutput(_get(workspace_of(request), name)).data)

    @extend_schema(request=TemplateInput, responses=TemplateOutput)
    def put(self, request: Request, name: str) -> Response:
        template = _get(workspace_of(request), name)
        data = TemplateInput(data={**request.data, "name": name} if isinstance(request.data, dict) else request.data)
        data.is_valid(raise_exception=True)
        template.body, template.by_type = data.validated_data["body"], data.validated_data["by_type"]
        template.save()
        return Response(TemplateOutput(template).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        _get(workspace_of(request), name).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
