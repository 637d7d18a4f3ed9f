"""Wrong passwords at /login/ and /admin/login/, limited so that nobody can lock the real owner out.

A wrong password (Django's `user_login_failed`, sent by both forms) counts once for its client
address and username pair (RATE_LIMIT_LOGIN_FAILURES) and once for the address alone
(RATE_LIMIT_LOGIN_ADDRESS_FAILURES, which stops one address from trying many usernames). Past
either, a sign-in POST for that pair (or from that address) is answered 429 with `Retry-After`
before the password is checked, until the window ends. There is no limit per username alone: a
stranger guessing from elsewhere only ever blocks their own address.

A browser that has signed in as a user carries a signed cookie naming that user (`known_browser`):
its attempts for that user are limited by the cookie alone, so someone sharing the owner's address
(one NAT, one proxy) cannot lock that browser out either. The reset path is `manage.py login_unlock
<username> [--address A]` (`login_limits_reset`): that username's pairs, and that address, start over.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from apps.core import cache
from apps.core.ratelimit import rate_blocked, rate_hit, request_address

BY_PAIR = "login-pair"
BY_ADDRESS = "login-address"
BY_BROWSER = "login-browser"
COOKIE = "ca_known_browser"
COOKIE_SALT = "apps.core.login_limits.known_browser"
COOKIE_DAYS = 90


def _generation(kind: str, ident: str) -> int:
    """How many times `login_limits_reset` cleared this username's pairs or this address (0: never)."""
    digest = hashlib.sha256(ident.encode(errors="replace")).hexdigest()[:24]
    return cache.counter_get(f"login-reset:{kind}:{digest}", alias=cache.FAILURES)


def _pair(address: str, username: str) -> str:
    return f"{_generation('user', username)}|{address}|{username}"


def _address(address: str) -> str:
    return f"{_generation('address', address)}|{address}"


def _username(request: HttpRequest) -> str:
    value = request.POST.get("username", "")
    return value.casefold() if isinstance(value, str) else ""


def known_browser(*, request: HttpRequest, username: str) -> str | None:
    """The browser's own id when its cookie says it signed in as `username` (casefolded), else None."""
    raw = request.COOKIES.get(COOKIE)
    if not raw or not username:
        return None
    try:
        value = signing.loads(raw, salt=COOKIE_SALT, max_age=COOKIE_DAYS * 86400)
    except signing.BadSignature:
        return None
    if not isinstance(value, dict) or value.get("u") != username or not isinstance(value.get("b"), str):
        return None
    return str(value["b"])


def login_failure_record(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    """`user_login_failed` receiver: one failure for the known browser, else for the pair and the address."""
    if request is None:
        return
    username = credentials.get("username")
    username = username.casefold() if isinstance(username, str) else ""
    browser = known_browser(request=request, username=username)
    if browser is not None:
        rate_hit(bucket=BY_BROWSER, ident=browser, rate=settings.RATE_LIMIT_LOGIN_FAILURES, failures=True)
        return
    address_failure_record(request=request)
    if username:
        ident = _pair(request_address(request), username)
        rate_hit(bucket=BY_PAIR, ident=ident, rate=settings.RATE_LIMIT_LOGIN_FAILURES, failures=True)


def address_failure_record(*, request: HttpRequest) -> None:
    """One failure against the client address alone (a wrong password; also a sign-up refused because the
    username is taken, so that a sign-up form is no faster a way to test usernames than the login form)."""
    address = request_address(request)
    rate_hit(bucket=BY_ADDRESS, ident=_address(address), rate=settings.RATE_LIMIT_LOGIN_ADDRESS_FAILURES, failures=True)


def address_blocked(*, request: HttpRequest) -> int | None:
    """Seconds until this address may try again, or None."""
    address = _address(request_address(request))
    return rate_blocked(bucket=BY_ADDRESS, ident=address, rate=settings.RATE_LIMIT_LOGIN_ADDRESS_FAILURES)


def login_blocked(*, request: HttpRequest) -> int | None:
    """Seconds until this sign-in may be tried again, or None when it may be tried now."""
    rate = settings.RATE_LIMIT_LOGIN_FAILURES
    username = _username(request)
    browser = known_browser(request=request, username=username)
    if browser is not None:
        return rate_blocked(bucket=BY_BROWSER, ident=browser, rate=rate)
    waits = [address_blocked(request=request)]
    if username:
        waits.append(rate_blocked(bucket=BY_PAIR, ident=_pair(request_address(request), username), rate=rate))
    blocked = [wait for wait in waits if wait is not None]
    return max(blocked) if blocked else None


def login_limits_reset(*, username: str, address: str | None = None) -> None:
    """Clear the failures of every address and `username` pair (and of `address` alone, when given)."""
    rates = (settings.RATE_LIMIT_LOGIN_FAILURES, settings.RATE_LIMIT_LOGIN_ADDRESS_FAILURES)
    keep = 2 * max((rate[1] for rate in rates if rate), default=1)
    for kind, ident in (("user", username.casefold()), ("address", address)):
        if ident:
            digest = hashlib.sha256(ident.encode(errors="replace")).hexdigest()[:24]
            # Outlives every window counted under the old generation, which then expire unread.
            cache.counter_incr(f"login-reset:{kind}:{digest}", timeout=keep, alias=cache.FAILURES)


def _remember_browser(request: HttpRequest, response: HttpResponse) -> None:
    """After a successful sign-in: the cookie that exempts this browser, for this user, from others' failures."""
    username = request.user.get_username().casefold()
    browser = known_browser(request=request, username=username) or secrets.token_hex(12)
    response.set_cookie(
        COOKIE,
        signing.dumps({"u": username, "b": browser}, salt=COOKIE_SALT),
        max_age=COOKIE_DAYS * 86400,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


class LoginRateLimitMiddleware:
    """Answers 429 to sign-in POSTs past the failure limits (the page says when and how to try again);
    marks the browser as known after a successful sign-in."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._paths: set[str] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST" or request.path_info not in self._login_paths():
            return self.get_response(request)
        wait = login_blocked(request=request)
        if wait is not None:
            response = render(request, "registration/rate_limited.html", {"retry_after": wait}, status=429)
            response["Retry-After"] = str(wait)
            return response
        was_anonymous = not request.user.is_authenticated
        response = self.get_response(request)
        if was_anonymous and request.user.is_authenticated:
            _remember_browser(request, response)
        return response

    def _login_paths(self) -> set[str]:
        if self._paths is None:
            self._paths = {reverse("login"), reverse("admin:login")}
        return self._paths
