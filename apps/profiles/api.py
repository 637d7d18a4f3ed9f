"""Agent API for profiles: one class per operation, input validated at the edge."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.pagination import DefaultPagination
from apps.core.serializers import FiniteFloatField, StrictSerializer
from apps.profiles import selectors, services
from apps.profiles.models import AgentProfile, ContextPosition, ConversationPreset, OutputFormat
from apps.profiles.services import ProfileInput
from apps.workspaces.authentication import workspace_of

NAME_REGEX = r"^[A-Za-z0-9_.-]{1,100}$"


class ProfileFields(StrictSerializer):
    """The configuration of a profile. Shapes are checked here; cross-field rules in the service."""

    agent_type = serializers.CharField(max_length=100, required=False, allow_blank=True)
    model = serializers.CharField(max_length=100, required=False, allow_blank=True)
    context_window = serializers.IntegerField(
        min_value=1, max_value=services.MAX_CONTEXT_WINDOW, required=False, allow_null=True
    )
    token_budget = serializers.IntegerField(
        min_value=1, max_value=settings.MAX_TOKEN_BUDGET, required=False, allow_null=True
    )
    retrieval_limit = serializers.IntegerField(
        min_value=1, max_value=services.MAX_RETRIEVAL_LIMIT, required=False, allow_null=True
    )
    preferred_format = serializers.ChoiceField(choices=OutputFormat.choices, required=False)
    type_filters = serializers.ListField(
        child=serializers.CharField(max_length=services.MAX_TYPE_FILTER_CHARS),
        max_length=services.MAX_TYPE_FILTERS,
        required=False,
    )
    template = serializers.CharField(max_length=100, required=False, allow_blank=True)
    conversation_preset = serializers.ChoiceField(choices=ConversationPreset.choices, required=False)
    ranking_function = serializers.CharField(max_length=100, required=False)
    ranking_weights = serializers.DictField(
        child=FiniteFloatField(min_value=0.0),
        required=False,
        help_text=f"Overrides of the ranking weights; keys: {', '.join(sorted(services.RANKING_WEIGHT_KEYS))}.",
    )
    safety_margin = FiniteFloatField(min_value=0.0, max_value=services.MAX_SAFETY_MARGIN, required=False)
    context_position = serializers.ChoiceField(
        choices=ContextPosition.choices,
        required=False,
        help_text="Where the LLM proxy puts the context: after (default) or before the client's system prompt",
    )

    excluded_items = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        help_text=(
            "Ids of the workspace's items its contexts leave out (trace reason profile_excluded), at most"
            f" {services.MAX_EXCLUDED_ITEMS}; replaces the list. Left out of a PUT or PATCH, the list is kept"
            " (the preview page sets it an item at a time)"
        ),
    )

    def profile_input(self, base: ProfileInput | None = None) -> ProfileInput:
        """The validated configuration; fields the request left out take their defaults, or `base`'s."""
        given = {k: v for k, v in self.validated_data.items() if k not in {"name", "excluded_items"}}
        return replace(base, **given) if base is not None else ProfileInput(**given)

    def excluded_input(self) -> list[int] | None:
        """The items the request excludes; None when it left the field out."""
        return self.validated_data.get("excluded_items")


class ProfileOutput(serializers.ModelSerializer):
    type_filters = serializers.ListField(child=serializers.CharField())
    # jsonb stores numbers as decimals and may hand back an int; weights are always floats.
    ranking_weights = serializers.DictField(child=serializers.FloatField())
    excluded_items = serializers.ListField(
        child=serializers.IntegerField(),
        read_only=True,
        help_text="Ids of the items its contexts leave out (trace reason profile_excluded)",
    )

    class Meta:
        model = AgentProfile
        fields = [
            "id",
            "name",
            "agent_type",
            "model",
            "context_window",
            "token_budget",
            "retrieval_limit",
            "preferred_format",
            "type_filters",
            "template",
            "conversation_preset",
            "ranking_function",
            "ranking_weights",
            "safety_margin",
            "context_position",
            "excluded_items",
            "created_at",
            "updated_at",
        ]


class ProfileListCreateApi(APIView):
    pagination_class = DefaultPagination  # also tells the schema that lists are paginated

    @extend_schema_serializer(component_name="ProfileCreate")
    class Input(ProfileFields):
        """A new profile; the fields left out take their defaults."""

        name = serializers.RegexField(NAME_REGEX, max_length=100, trim_whitespace=False)

    @extend_schema(responses=ProfileOutput(many=True))
    def get(self, request: Request) -> Response:
        profiles = selectors.profiles_list(workspace=workspace_of(request))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(profiles, request, view=self)
        return paginator.get_paginated_response(ProfileOutput(page, many=True).data)

    @extend_schema(request=Input, responses={201: ProfileOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        profile = services.profile_create(
            workspace=workspace_of(request),
            name=data.validated_data["name"],
            data=data.profile_input(),
            excluded_items=data.excluded_input() or (),
        )
        return Response(ProfileOutput(profile).data, status=status.HTTP_201_CREATED)


class ProfileDetailApi(APIView):
    @extend_schema_serializer(component_name="ProfileReplace")
    class Input(ProfileFields):
        """The whole profile: the fields left out return to their defaults."""

        name = serializers.RegexField(
            NAME_REGEX, max_length=100, trim_whitespace=False, required=False, help_text="A new name, to rename."
        )

    @extend_schema_serializer(component_name="ProfileUpdate")
    class PatchInput(ProfileFields):
        """Some fields of the profile: those left out keep their values."""

        name = serializers.RegexField(
            NAME_REGEX, max_length=100, trim_whitespace=False, required=False, help_text="A new name, to rename."
        )

    @extend_schema(responses=ProfileOutput)
    def get(self, request: Request, name: str) -> Response:
        profile = selectors.profile_get(workspace=workspace_of(request), name=name)
        return Response(ProfileOutput(profile).data)

    @extend_schema(request=Input, responses=ProfileOutput)
    def put(self, request: Request, name: str) -> Response:
        profile = selectors.profile_get(workspace=workspace_of(request), name=name)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        profile = services.profile_update(
            profile=profile,
            name=data.validated_data.get("name", name),
            data=data.profile_input(),
            excluded_items=data.excluded_input(),
        )
        return Response(ProfileOutput(profile).data)

    @extend_schema(request=PatchInput, responses=ProfileOutput)
    def patch(self, request: Request, name: str) -> Response:
        profile = selectors.profile_get(workspace=workspace_of(request), name=name)
        data = self.PatchInput(data=request.data)
        data.is_valid(raise_exception=True)
        profile = services.profile_update(
            profile=profile,
            name=data.validated_data.get("name", name),
            data=data.profile_input(base=selectors.profile_settings(profile=profile)),
            excluded_items=data.excluded_input(),
        )
        return Response(ProfileOutput(profile).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, name: str) -> Response:
        profile = selectors.profile_get(workspace=workspace_of(request), name=name)
        services.profile_delete(profile=profile)
        return Response(status=status.HTTP_204_NO_CONTENT)
