"""Agent API for the key's workspace: status at a glance, and API keys and invitations (admin-scoped keys only)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiTypes, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput, NotFound
from apps.core.pagination import DefaultPagination
from apps.core.serializers import StrictSerializer
from apps.workspaces.authentication import api_key_of, workspace_of
from apps.workspaces.errors import (
    API_KEY_NOT_FOUND,
    API_KEY_SECRET_NOT_REPLAYED,
    INVALID_LAYER_KIND,
    INVITATION_LINK_NOT_REPLAYED,
    INVITATION_NOT_FOUND,
)
from apps.workspaces.idempotency import replay_instead
from apps.workspaces.invitations import MAX_DAYS, invitation_create, invitation_revoke
from apps.workspaces.models import ApiKey, Invitation, Role, Scope, Workspace
from apps.workspaces.retention import LAYER_KINDS
from apps.workspaces.selectors import invitations_list, workspace_status
from apps.workspaces.services import api_key_create, api_key_revoke, workspace_settings_update


class StatusApi(APIView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        return Response(workspace_status(workspace=workspace_of(request)))


class ApiKeyOutput(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]


class CreatedApiKeyOutput(ApiKeyOutput):
    key = serializers.CharField(help_text="The secret, shown once: only its hash is stored.")

    class Meta(ApiKeyOutput.Meta):
        fields = [*ApiKeyOutput.Meta.fields, "key"]


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

    @extend_schema(request=Input, responses={201: CreatedApiKeyOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        created = api_key_create(workspace=workspace_of(request), name=v["name"], scopes=v.get("scopes"))
        body = dict(ApiKeyOutput(created.api_key).data, key=created.secret)  # CreatedApiKeyOutput's fields
        response = Response(body, status=status.HTTP_201_CREATED)
        key = created.api_key
        replay_instead(  # the secret is shown once: a repeat of this request says what became of it
            response,
            code=API_KEY_SECRET_NOT_REPLAYED,
            message=(
                f"this Idempotency-Key created API key {key.pk} ({key.prefix}…); its secret is shown only in the "
                f"first answer. If that answer was lost, revoke the key (POST /api/v1/keys/{key.pk}/revoke/) "
                "and create another."
            ),
            details={"id": key.pk, "prefix": key.prefix},
        )
        return response


class ApiKeyRevokeApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema(request=None, responses=ApiKeyOutput)
    def post(self, request: Request, key_id: int) -> Response:
        key = ApiKey.objects.filter(workspace=workspace_of(request), pk=key_id).first()
        if key is None:
            raise NotFound("API key not found", code=API_KEY_NOT_FOUND)
        return Response(ApiKeyOutput(api_key_revoke(api_key=key)).data)


class InvitationOutput(serializers.ModelSerializer):
    state = serializers.CharField(read_only=True, help_text="pending, accepted, revoked or expired")
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True)
    accepted_by = serializers.CharField(source="accepted_by.username", read_only=True, allow_null=True)

    class Meta:
        model = Invitation
        fields = [
            "id",
            "role",
            "note",
            "state",
            "created_at",
            "expires_at",
            "created_by",
            "accepted_at",
            "accepted_by",
            "revoked_at",
        ]


class CreatedInvitationOutput(InvitationOutput):
    token = serializers.CharField(help_text="Shown once: only its hash is stored.")
    url = serializers.CharField(help_text="The link to send: whoever opens it signs up or signs in, then accepts.")

    class Meta(InvitationOutput.Meta):
        fields = [*InvitationOutput.Meta.fields, "token", "url"]


class InvitationListCreateApi(APIView):
    """Invite someone with a role (a link that works once, shown once), and list the workspace's invitations.

    Nobody is added by username: the person the link reaches accepts it, signed in, or nothing happens.
    """

    required_scope = Scope.ADMIN
    pagination_class = DefaultPagination

    @extend_schema_serializer(component_name="InvitationCreate")
    class Input(StrictSerializer):
        role = serializers.ChoiceField(choices=Role.choices)
        note = serializers.CharField(max_length=200, required=False, allow_blank=True, help_text="Whom it is for.")
        days = serializers.IntegerField(min_value=1, max_value=MAX_DAYS, required=False, help_text="Default 7.")

    @extend_schema(responses=InvitationOutput(many=True))
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(invitations_list(workspace=workspace_of(request)), request, view=self)
        return paginator.get_paginated_response(InvitationOutput(page, many=True).data)

    @extend_schema(request=Input, responses={201: CreatedInvitationOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        created = invitation_create(
            workspace=workspace_of(request),
            role=v["role"],
            note=v.get("note", ""),
            days=v.get("days"),
            created_by_key=api_key_of(request),
        )
        url = request.build_absolute_uri(reverse("web:invitation", args=[created.token]))
        body = dict(InvitationOutput(created.invitation).data, token=created.token, url=url)
        response = Response(body, status=status.HTTP_201_CREATED)
        made = created.invitation
        replay_instead(  # the link is shown once: a repeat of this request says what became of it
            response,
            code=INVITATION_LINK_NOT_REPLAYED,
            message=(
                f"this Idempotency-Key created invitation {made.pk}; its link is shown only in the first answer. "
                f"If that answer was lost, revoke it (POST /api/v1/invitations/{made.pk}/revoke/) and create another."
            ),
            details={"id": made.pk},
        )
        return response


class InvitationRevokeApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema(request=None, responses=InvitationOutput)
    def post(self, request: Request, invitation_id: int) -> Response:
        invitation = Invitation.objects.filter(workspace=workspace_of(request), pk=invitation_id).first()
        if invitation is None:
            raise NotFound("invitation not found", code=INVITATION_NOT_FOUND)
        return Response(InvitationOutput(invitation_revoke(invitation=invitation)).data)


MAX_RETENTION_DAYS = 3650


class WorkspaceSettingsOutput(serializers.ModelSerializer):
    class Meta:
        model = Workspace
        fields = ["slug", "name", "records_retention_days", "messages_retention_days", "layer_kind_ttl_days"]


class WorkspaceSettingsApi(APIView):
    """The key's workspace and its settings (admin keys): its name, how long assembly records are kept, and
    how long items are (messages of closed sessions, a TTL per layer kind: apps/workspaces/retention.py)."""

    required_scope = Scope.ADMIN

    @extend_schema_serializer(component_name="WorkspaceSettingsUpdate")
    class Input(StrictSerializer):
        name = serializers.CharField(max_length=200, required=False)
        records_retention_days = serializers.IntegerField(
            min_value=0, max_value=MAX_RETENTION_DAYS, required=False, help_text="0 keeps records forever"
        )
        messages_retention_days = serializers.IntegerField(
            min_value=1,
            max_value=MAX_RETENTION_DAYS,
            required=False,
            allow_null=True,
            help_text="days a message of a closed session is kept; null keeps them forever",
        )
        layer_kind_ttl_days = serializers.DictField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_RETENTION_DAYS),
            required=False,
            help_text='days an item is kept by its layer\'s kind, e.g. {"session": 30}; {} clears every TTL',
        )

        def validate_layer_kind_ttl_days(self, value: dict[str, int]) -> dict[str, int]:
            unknown = sorted(set(value) - set(LAYER_KINDS))
            if unknown:
                raise InvalidInput(
                    f"unknown layer kinds: {', '.join(kind[:50] for kind in unknown[:10])}",
                    code=INVALID_LAYER_KIND,
                    details={"unknown": [kind[:50] for kind in unknown[:20]], "allowed": list(LAYER_KINDS)},
                )
            return value

    @extend_schema(responses=WorkspaceSettingsOutput)
    def get(self, request: Request) -> Response:
        return Response(WorkspaceSettingsOutput(workspace_of(request)).data)

    @extend_schema(request=Input, responses=WorkspaceSettingsOutput)
    def patch(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = workspace_settings_update(workspace=workspace_of(request), **data.validated_data)
        return Response(WorkspaceSettingsOutput(workspace).data)
