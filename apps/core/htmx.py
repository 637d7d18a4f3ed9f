"""Every HTMX decision the pages make, in one place.

A view renders one template; for an HTMX request it renders only the named partial of that
template (django-template-partials: "page.html#partial"), so the page and the fragment never drift.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url


def is_htmx(request: HttpRequest) -> bool:
    """True for a request made by htmx itself (HX-Request), but not for a history restore.

    A history-restore request wants the whole page back, like a normal navigation.
    """
    details = getattr(request, "htmx", None)
    if details is None:
        return request.headers.get("HX-Request") == "true"
    return bool(details) and not details.history_restore_request


def render_page_or_partial(
    request: HttpRequest,
    template_name: str,
    partial_name: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
) -> HttpResponse:
    """The whole page normally; only `template_name#partial_name` when htmx asked for it."""
    name = f"{template_name}#{partial_name}" if is_htmx(request) else template_name
    response = render(request, name, dict(context), status=status)
    # The same URL answers with a page or a fragment: caches must keep them apart.
    response.headers["Vary"] = _vary_with_hx_request(response.headers.get("Vary"))
    return response


def _vary_with_hx_request(vary: str | None) -> str:
    if not vary:
        return "HX-Request"
    if "hx-request" in vary.lower():
        return vary
    return f"{vary}, HX-Request"


class HtmxLoginRedirectMiddleware:
    """An HTMX request whose session has expired gets `HX-Redirect` to the login page.

    Without it the browser's XHR follows the 302 and htmx swaps a whole login page into the
    fragment's place (a second top bar inside the preview). `next` is the page the person is on
    (`HX-Current-URL`), not the fragment URL, so signing in brings them back to the page.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 302 or not is_htmx(request):
            return response
        login = resolve_url(settings.LOGIN_URL)
        location = response.headers.get("Location", "")
        if urlsplit(location).path != login:
            return response
        current = urlsplit(request.headers.get("HX-Current-URL", ""))
        page = current.path + (f"?{current.query}" if current.query else "") if current.path else request.path
        redirect = HttpResponse(status=200)
        query = urlencode({REDIRECT_FIELD_NAME: page}, safe="/")  # as Django's redirect_to_login writes it
        redirect.headers["HX-Redirect"] = f"{login}?{query}"
        return redirect
