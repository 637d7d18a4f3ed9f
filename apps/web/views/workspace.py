"""Switching workspace: a POST with the CSRF token, then back to the page the person was on."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from apps.web.workspace_choice import workspace_switch


@login_required
@require_POST
def switch(request: HttpRequest) -> HttpResponse:
    """Remember the chosen workspace; an unknown or forbidden slug changes nothing (404)."""
    chosen = workspace_switch(request=request, slug=request.POST.get("workspace", ""))
    if chosen is None:
        return HttpResponse("No such workspace.", status=404, content_type="text/plain")
    target = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=False)
    # A page of one workspace's object (a layer, a profile) means nothing in another: go to its list.
    return HttpResponseRedirect(_area_root(target) if safe and target else reverse("web:dashboard"))


def _area_root(path: str) -> str:
    """`/layers/12/` → `/layers/`; `/preview/?layer=3` → `/preview/`; `/` stays."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    return f"/{parts[0]}/" if parts else "/"
