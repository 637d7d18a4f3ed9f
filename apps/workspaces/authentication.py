"""`Authorization: Bearer <api key>`: the key decides the workspace of the whole request.

Rate limits apply here, so REST, SSE and WebSocket share them: bad keys are counted per client
address (past RATE_LIMIT_API_KEY_FAILURES the address gets 429 before any key is looked up), and
every authenticated request counts against its key and its address.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed, NotAuthenticated
from rest_framework.request import Request

from apps.core.errors import TooManyRequests
from apps.core.ratelimit import rate_blocked, rate_hit, request_address
from apps.workspaces.audit import actor_set, key_actor
from apps.workspaces.models import ApiKey, Workspace
from apps.workspaces.selectors import api_key_get_active
from apps.workspaces.services import api_key_touch


@dataclass(frozen=True)
class ApiClient:
    """The request's principal: an API key acting for one workspace."""

    workspace: Workspace
    api_key: ApiKey
    is_authenticated: bool = True
    is_active: bool = True


def authenticate_secret(secret: str, *, address: str) -> ApiClient | None:
    """The client for an active key, or None; raises TooManyRequests past a rate limit."""
    failures = settings.RATE_LIMIT_API_KEY_FAILURES
    wait = rate_blocked(bucket="api-key-failures", ident=address, rate=failures)
    if wait is not None:
        raise TooManyRequests("too many bad API keys from this address", retry_after=wait)
    key = api_key_get_active(secret=secret)
    if key is None:
        rate_hit(bucket="api-key-failures", ident=address, rate=failures, failures=True)
        return None
    wait = rate_hit(bucket="api-key", ident=str(key.pk), rate=settings.RATE_LIMIT_API_KEY)
    if wait is not None:
        raise TooManyRequests("this API key is over its request rate", retry_after=wait)
    wait = rate_hit(bucket="api-address", ident=address, rate=settings.RATE_LIMIT_API_ADDRESS)
    if wait is not None:
        raise TooManyRequests("this address is over its request rate", retry_after=wait)
    api_key_touch(api_key=key)
    return ApiClient(workspace=key.workspace, api_key=key)


def client_of(request: Request) -> ApiClient:
    """The API client behind a DRF request that passed `IsAuthenticated`.

    `ApiKeyAuthentication` is the only DRF authenticator, so an authenticated request's user is
    always an `ApiClient`; the check turns a wiring mistake into a 401 instead of an AttributeError,
    and gives views a typed principal (the stubs type `request.user` as a Django user).
    """
    user: object = request.user
    if not isinstance(user, ApiClient):
        raise NotAuthenticated()
    return user


def workspace_of(request: Request) -> Workspace:
    """The workspace the request's API key acts for: every API read and write is scoped to it."""
    return client_of(request).workspace


def api_key_of(request: Request) -> ApiKey:
    """The API key that authenticated the request (recorded on assembly traces and metrics)."""
    return client_of(request).api_key


class ApiKeyAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        header = get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise AuthenticationFailed("Authorization header must be 'Bearer <api key>'.")
        try:
            secret = header[1].decode()
        except UnicodeError as exc:
            raise AuthenticationFailed("Invalid API key.") from exc
        client = authenticate_secret(secret, address=request_address(request))
        if client is None:
            raise AuthenticationFailed("Invalid or revoked API key.")
        key = client.api_key
        actor_set(key_actor(key_id=key.pk, name=key.name, prefix=key.prefix))  # the audit trail's "who"
        return client, key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
