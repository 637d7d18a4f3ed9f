"""Agent API for redaction: redact a text, and the workspace's allow-list of false positives."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.serializers import StrictSerializer
from apps.redaction import selectors, services
from apps.redaction.models import AllowKind, AllowlistEntry
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import Scope

MAX_REDACT_CHARS = 200_000


class RedactApi(APIView):
    required_scope = Scope.READ  # a query: it changes nothing a client owns

    @extend_schema_serializer(component_name="RedactRequest")
    class Input(StrictSerializer):
        text = serializers.CharField(max_length=MAX_REDACT_CHARS, allow_blank=True, trim_whitespace=False)

    @extend_schema(
        request=Input,
        responses=inline_serializer(
            "RedactResponse",
            {
                "text": serializers.CharField(),
                "findings": serializers.ListField(
                    child=inline_serializer(
                        "RedactFinding",
                        {
                            "type": serializers.CharField(),
                            "start": serializers.IntegerField(),
                            "end": serializers.IntegerField(),
                        },
                    )
                ),
            },
        ),
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        result = services.text_redact(workspace_id=workspace_of(request).pk, text=data.validated_data["text"])
        return Response(result.as_dict())


class AllowlistEntryOutput(serializers.ModelSerializer):
    class Meta:
        model = AllowlistEntry
        fields = ["id", "kind", "value", "note", "created_at"]


class AllowlistApi(APIView):
    @extend_schema_serializer(component_name="AllowlistEntryCreate")
    class Input(StrictSerializer):
        kind = serializers.ChoiceField(choices=AllowKind.choices, required=False, default=AllowKind.EXACT)
        value = serializers.CharField(max_length=500, trim_whitespace=False)
        note = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")

    @extend_schema(responses=AllowlistEntryOutput(many=True))
    def get(self, request: Request) -> Response:
        entries = selectors.allowlist_entries(workspace=workspace_of(request))
        return Response(AllowlistEntryOutput(entries, many=True).data)

    @extend_schema(request=Input, responses={201: AllowlistEntryOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        entry = services.allowlist_entry_create(workspace=workspace_of(request), **data.validated_data)
        return Response(AllowlistEntryOutput(entry).data, status=status.HTTP_201_CREATED)


class AllowlistEntryApi(APIView):
    @extend_schema(responses=AllowlistEntryOutput)
    def get(self, request: Request, entry_id: int) -> Response:
        entry = selectors.allowlist_entry_get(workspace=workspace_of(request), entry_id=entry_id)
        return Response(AllowlistEntryOutput(entry).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, entry_id: int) -> Response:
        entry = selectors.allowlist_entry_get(workspace=workspace_of(request), entry_id=entry_id)
        services.allowlist_entry_delete(entry=entry)
        return Response(status=status.HTTP_204_NO_CONTENT)
