"""Supersession proposals over the API: list them, accept or reject one (apps/layers/supersession.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_STATE
from apps.core.pagination import DefaultPagination
from apps.layers import selectors
from apps.layers.api import parse_int
from apps.layers.models import ProposalState, SupersessionProposal
from apps.layers.supersession import proposal_decide
from apps.workspaces.authentication import api_key_of, workspace_of


class ProposalItemOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    type = serializers.CharField()
    title = serializers.CharField()
    content = serializers.CharField()
    created_at = serializers.DateTimeField()
    superseded_by = serializers.IntegerField(source="superseded_by_id", allow_null=True)


class ProposalOutput(serializers.ModelSerializer):
    old = ProposalItemOutput(help_text="the older item, superseded once accepted")
    new = ProposalItemOutput(help_text="the newer item that would replace it")

    class Meta:
        model = SupersessionProposal
        fields = [
            "id",
            "layer",
            "old",
            "new",
            "similarity",
            "reason",
            "detector",
            "state",
            "created_at",
            "decided_at",
            "decided_by",
        ]


class ProposalListApi(APIView):
    pagination_class = DefaultPagination

    @extend_schema(
        parameters=[
            OpenApiParameter("state", str, enum=ProposalState.values, description="Only proposals in this state"),
            OpenApiParameter("layer", int, description="Only proposals of this layer"),
        ],
        responses=ProposalOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        state = request.query_params.get("state") or None
        if state is not None and state not in ProposalState.values:
            raise InvalidInput(f"state must be one of {', '.join(ProposalState.values)}", code=INVALID_STATE)
        proposals = selectors.proposals_list(
            workspace=workspace_of(request),
            state=state,
            layer_id=parse_int(request.query_params.get("layer"), name="layer"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(proposals, request, view=self)
        return paginator.get_paginated_response(ProposalOutput(page, many=True).data)


def key_label(request: Request) -> str:
    """Who decided, as the records name an API key: its name and prefix, never its secret."""
    key = api_key_of(request)
    return f"key {key.name} ({key.prefix}…)"


class ProposalDecideApi(APIView):
    """Accept (the old item is superseded by the new one) or reject a pending proposal."""

    accept = True

    @extend_schema(request=None, responses=ProposalOutput)
    def post(self, request: Request, proposal_id: int) -> Response:
        proposal = selectors.proposal_get(workspace=workspace_of(request), proposal_id=proposal_id)
        decided = proposal_decide(proposal=proposal, accept=self.accept, decided_by=key_label(request))
        found = selectors.proposals_list(workspace=workspace_of(request)).get(pk=decided.pk)
        return Response(ProposalOutput(found).data)


class ProposalAcceptApi(ProposalDecideApi):
    accept = True


class ProposalRejectApi(ProposalDecideApi):
    accept = False
