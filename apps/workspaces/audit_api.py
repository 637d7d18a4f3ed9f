"""`GET /api/v1/audit/`: the workspace's audit trail for admin keys, newest first, filterable."""

from __future__ import annotations

from datetime import datetime

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_TARGET_KIND, field_code
from apps.core.pagination import DefaultPagination
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import AuditEntry, AuditTarget, Scope
from apps.workspaces.selectors import AuditFilters, audit_entries


class AuditEntryOutput(serializers.ModelSerializer):
    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "created_at",
            "actor_kind",
            "actor",
            "actor_user_id",
            "actor_key_id",
            "target_kind",
            "target_id",
            "target_label",
            "action",
            "changes",
        ]


def _when(value: str | None, name: str) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(value)
    if parsed is None:
        raise InvalidInput(f"{name} must be an ISO 8601 date-time", code=field_code(name))
    return parsed


class AuditListApi(APIView):
    required_scope = Scope.ADMIN
    pagination_class = DefaultPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("target_kind", str, enum=AuditTarget.values, description="Only changes of this kind"),
            OpenApiParameter("target_id", str, description="Only changes of this object"),
            OpenApiParameter("actor", str, description="Only changes by this actor (a username or `key <name>`)"),
            OpenApiParameter("action", str, description="create, update, delete, revoke"),
            OpenApiParameter("since", str, description="ISO 8601: only changes at or after"),
            OpenApiParameter("until", str, description="ISO 8601: only changes before"),
            OpenApiParameter(
                "q", str, description="Only changes with this text in the object's label or id, the actor or the values"
            ),
        ],
        responses=AuditEntryOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        params = request.query_params
        kind = params.get("target_kind") or ""
        if kind and kind not in AuditTarget.values:
            raise InvalidInput(f"target_kind must be one of {', '.join(AuditTarget.values)}", code=INVALID_TARGET_KIND)
        filters = AuditFilters(
            target_kind=kind,
            target_id=params.get("target_id") or "",
            actor=params.get("actor") or "",
            action=params.get("action") or "",
            since=_when(params.get("since"), "since"),
            until=_when(params.get("until"), "until"),
            text=(params.get("q") or "").strip(),
        )
        entries = audit_entries(workspace=workspace_of(request), filters=filters)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(entries, request, view=self)
        return paginator.get_paginated_response(AuditEntryOutput(page, many=True).data)
