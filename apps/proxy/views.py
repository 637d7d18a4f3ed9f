"""The proxy's paths, where the official SDKs point instead of at their provider:
`/proxy/openai/v1/chat/completions`, `/proxy/openai/v1/models` and `/proxy/anthropic/v1/messages`.

The service's API key authenticates them (`Authorization: Bearer`, or `x-api-key` as the Anthropic SDK
sends it), with its scope and rate limits; the upstream's key is the workspace's stored one, or the
call's own `X-Upstream-Authorization`, used for that call only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from asgiref.sync import async_to_sync
from django.http import HttpResponse, HttpResponseBase
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework.views import APIView

from apps.assembly.api import arrived
from apps.core.client_gone import client_gone
from apps.core.errors import InvalidInput
from apps.core.field_errors import INVALID_BODY, INVALID_TOKEN_BUDGET
from apps.core.ratelimit import request_address
from apps.proxy.calls import Options, call_prepare
from apps.proxy.relay import read_whole, relay
from apps.proxy.selectors import upstream_target
from apps.proxy.upstream import passed_headers, until_gone, upstream_headers, upstream_open
from apps.proxy.upstream_keys import Target
from apps.proxy.wire import Wire
from apps.proxy.wire.anthropic import AnthropicMessages
from apps.proxy.wire.openai_chat import OpenAIChat
from apps.proxy.wire.openai_responses import OpenAIResponses
from apps.workspaces.authentication import (
    ApiClient,
    ApiKeyAuthentication,
    api_key_of,
    authenticate_secret,
    workspace_of,
)
from apps.workspaces.models import ApiKey, Scope

UPSTREAM_KEY_HEADER = "X-Upstream-Authorization"


class ProxyKeyAuthentication(ApiKeyAuthentication):
    """`Authorization: Bearer <key>` as every API path takes it, or `x-api-key: <key>` (the Anthropic SDK)."""

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        found = super().authenticate(request)
        secret = request.headers.get("x-api-key")
        if found is not None or not secret:
            return found
        client = authenticate_secret(secret.strip(), address=request_address(request))
        if client is None:
            raise AuthenticationFailed("Invalid or revoked API key.")
        return client, client.api_key


def _budget(value: str | None) -> int | None:
    if not value:
        return None
    if not value.strip().isdigit() or not 1 <= int(value) <= 10_000_000:
        raise InvalidInput("X-Context-Budget must be a whole number of tokens", code=INVALID_TOKEN_BUDGET)
    return int(value)


def options_of(request: Request) -> Options:
    h = request.headers
    return Options(
        session=(h.get("X-Context-Session") or "").strip(),
        parent=(h.get("X-Context-Parent") or "").strip(),
        profile=(h.get("X-Context-Profile") or "").strip()[:100],
        budget=_budget(h.get("X-Context-Budget")),
        off=(h.get("X-Context-Off") or "").strip().lower() in ("1", "true", "yes", "on"),
    )


def target_of(request: Request, kind: str) -> Target:
    return upstream_target(
        workspace_id=workspace_of(request).pk, kind=kind, request_key=request.headers.get(UPSTREAM_KEY_HEADER)
    )


class ProxyApi(APIView):
    """Base of the proxy's paths: the proxy's authentication, the answer's media type left to the upstream."""

    authentication_classes = [ProxyKeyAuthentication]
    required_scope = Scope.WRITE  # every call records turns
    wire: ClassVar[Wire]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        return super().perform_content_negotiation(request, force=True)  # SDKs accept JSON and SSE

    @extend_schema(exclude=True)  # the providers' own specifications describe these paths
    def post(self, request: Request) -> HttpResponseBase:
        body = request.data
        if not isinstance(body, dict):
            raise InvalidInput("the body must be a JSON object", code=INVALID_BODY)
        target = target_of(request, self.wire.kind)
        prepared = call_prepare(
            workspace=workspace_of(request),
            api_key=api_key_of(request),
            wire=self.wire,
            body=body,
            options=options_of(request),
            started=arrived(request),
        )
        return relay(
            workspace=workspace_of(request),
            wire=self.wire,
            target=target,
            prepared=prepared,
            stream=body.get("stream") is True,
            incoming={k.lower(): v for k, v in request.headers.items()},
            gone=client_gone(request),
        )


class ChatCompletionsApi(ProxyApi):
    wire = OpenAIChat()


class ResponsesApi(ProxyApi):
    wire = OpenAIResponses()


class AnthropicMessagesApi(ProxyApi):
    wire = AnthropicMessages()


class ModelsApi(APIView):
    """`GET /proxy/openai/v1/models`: the upstream's own list, as it answers it."""

    authentication_classes = [ProxyKeyAuthentication]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> HttpResponseBase:
        target = target_of(request, "openai")
        headers = upstream_headers(target, {})
        opening = upstream_open(target=target, method="GET", path="/models", body=None, headers=headers)
        gone = client_gone(request)
        response = async_to_sync(until_gone)(opening, gone)
        content = async_to_sync(until_gone)(read_whole(response), gone)
        kind = response.headers.get("content-type") or None
        answer = HttpResponse(content, status=response.status_code, content_type=kind)
        for name, value in passed_headers(response).items():
            if name.lower() != "content-type":
                answer[name] = value
        return answer
