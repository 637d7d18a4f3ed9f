"""Wrong passwords at /login/ and /admin/login/ are limited per client address and per username.

Failures are counted from Django's `user_login_failed` signal (both forms authenticate through
it); past RATE_LIMIT_LOGIN_FAILURES, a sign-in POST from that address or for that username is
answered 429 with `Retry-After` before the password is checked, until the window ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from apps.core.ratelimit import rate_blocked, rate_hit, request_address

BY_ADDRESS = "login-address"
BY_USERNAME = "login-username"


def login_failure_record(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    """`user_login_failed` receiver: one failure for the address and one for the username."""
    if request is None:
        return
    rate = settings.RATE_LIMIT_LOGIN_FAILURES
    rate_hit(bucket=BY_ADDRESS, ident=request_address(request), rate=rate, failures=True)
    username = credentials.get("username")
    if isinstance(username, str) and username:
        rate_hit(bucket=BY_USERNAME, ident=username.casefold(), rate=rate, failures=True)


def login_blocked(*, request: HttpRequest) -> int | None:
    """Seconds until this sign-in may be tried again, or None when it may be tried now."""
    rate = settings.RATE_LIMIT_LOGIN_FAILURES
    waits = [rate_blocked(bucket=BY_ADDRESS, ident=request_address(request), rate=rate)]
    username = request.POST.get("username")
    if username:
        waits.append(rate_blocked(bucket=BY_USERNAME, ident=username.casefold(), rate=rate))
    blocked = [wait for wait in waits if wait is not None]
    return max(blocked) if blocked else None


class LoginRateLimitMiddleware:
    """Answers 429 to sign-in POSTs past the failure limit (the page says when to try again)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._paths: set[str] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path_info in self._login_paths():
            wait = login_blocked(request=request)
            if wait is not None:
                response = render(request, "registration/rate_limited.html", {"retry_after": wait}, status=429)
                response["Retry-After"] = str(wait)
                return response
        return self.get_response(request)

    def _login_paths(self) -> set[str]:
        if self._paths is None:
            self._paths = {reverse("login"), reverse("admin:login")}
        return self._paths
