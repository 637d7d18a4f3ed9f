"""Every HTMX decision the pages make, in one place.

A view renders one template; for an HTMX request it renders only the named partial of that
template (django-template-partials: "page.html#partial"), so the page and the fragment never drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


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
