"""`/api/v1/erasure/` (admin keys): erase items, a user or a text everywhere, and read the receipts."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.erasure import ErasureTarget
from apps.core.pagination import DefaultPagination
from apps.core.serializers import StrictSerializer
from apps.erasure.models import ErasureRecord
from apps.erasure.selectors import erasure_get, erasures_list
from apps.erasure.services import erasure_run
from apps.workspaces.authentication import api_key_of, workspace_of
from apps.workspaces.models import Scope

MAX_ITEM_IDS = 10_000
MAX_ID = 2**63 - 1  # PostgreSQL's bigint: a larger id is refused here, not by the database (a 500)


class PlaceOutput(serializers.Serializer):
    found = serializers.IntegerField()
    removed = serializers.IntegerField()
    rewritten = serializers.IntegerField()
    regenerated = serializers.IntegerField()
    cleared = serializers.IntegerField()


class NamedOutput(serializers.Serializer):
    item_ids = serializers.ListField(child=serializers.IntegerField())
    external_id_prefix = serializers.CharField(allow_null=True, help_text="HMAC-SHA256 of the prefix; null: none.")
    user = serializers.CharField(allow_null=True, help_text="HMAC-SHA256 of the user; null: none.")
    text = serializers.CharField(allow_null=True, help_text="HMAC-SHA256 of the case-folded text; null: none.")


class ErasureOutput(serializers.ModelSerializer):
    """A receipt: what was named (no text: HMACs), what each place held and what became of it, when."""

    named = NamedOutput()
    places = serializers.DictField(
        child=PlaceOutput(),
        help_text=(
            "By place (items, relationships, embeddings, layers, layer_names, summaries, communities, attempts, "
            "error_patterns, assembly_records, proxy_calls, cached_contexts, idempotent_answers)."
        ),
    )
    api_key = serializers.CharField(source="api_key.prefix", allow_null=True, read_only=True)

    class Meta:
        model = ErasureRecord
        fields = [
            "id",
            "dry_run",
            "dry_run_of",
            "state",
            "named",
            "places",
            "failed_at",
            "api_key",
            "created_at",
            "finished_at",
        ]


class ErasureListCreateApi(APIView):
    """Erase (or dry-run) what a request names, everywhere it lives; list the receipts.

    A text match must be reviewed first: POST it with `dry_run: true`, then the same request with
    `dry_run_id` set to that dry run's `id` (the text is sent again: nothing stores it).
    """

    required_scope = Scope.ADMIN
    pagination_class = DefaultPagination

    @extend_schema_serializer(component_name="ErasureCreate")
    class Input(StrictSerializer):
        item_ids = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID), required=False, max_length=MAX_ITEM_IDS
        )
        external_id_prefix = serializers.CharField(
            max_length=200, required=False, help_text="Items whose external id starts so."
        )
        user = serializers.CharField(
            max_length=200,
            required=False,
            help_text=(
                "Items whose metadata `user` is this, the proxy's session of this user, and the summaries "
                "personalized for the member of this name."
            ),
        )
        text = serializers.CharField(
            min_length=3, max_length=500, required=False, trim_whitespace=False, help_text="Case-insensitive match."
        )
        dry_run = serializers.BooleanField(default=False)
        dry_run_id = serializers.IntegerField(
            min_value=1, max_value=MAX_ID, required=False, help_text="The reviewed dry run (text match)."
        )

    @extend_schema(responses=ErasureOutput(many=True))
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(erasures_list(workspace=workspace_of(request)), request, view=self)
        return paginator.get_paginated_response(ErasureOutput(page, many=True).data)

    @extend_schema(request=Input, responses={201: ErasureOutput})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        target = ErasureTarget(
            item_ids=tuple(v.get("item_ids", ())),
            external_id_prefix=v.get("external_id_prefix", ""),
            user=v.get("user", ""),
            text=v.get("text", ""),
        )
        record = erasure_run(
            workspace=workspace_of(request),
            target=target,
            dry_run=v["dry_run"],
            dry_run_id=v.get("dry_run_id"),
            api_key=api_key_of(request),
        )
        return Response(ErasureOutput(record).data, status=status.HTTP_201_CREATED)


class ErasureDetailApi(APIView):
    required_scope = Scope.ADMIN

    @extend_schema(responses=ErasureOutput)
    def get(self, request: Request, erasure_id: int) -> Response:
        return Response(ErasureOutput(erasure_get(workspace=workspace_of(request), erasure_id=erasure_id)).data)
