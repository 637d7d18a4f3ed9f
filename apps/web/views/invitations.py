"""The invitation link, `/invite/<token>/`: whoever holds it signs up and joins, or signs in and accepts.

Joining needs the person's own click while signed in (or their sign-up), so nobody becomes a member
without consent. An unknown, used, revoked or expired link gets one and the same 404 page. Answers are
`no-store` (the link is a secret until used); a sign-up refused because the username is taken counts
against the address like a wrong password (`core.login_limits`), so the form is no username oracle
faster than the login page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from apps.core.errors import DomainError
from apps.core.login_limits import address_blocked, address_failure_record
from apps.web.forms.invitation import SignUpForm
from apps.web.secret_panel import no_store as _no_store
from apps.web.workspace_choice import workspace_switch
from apps.workspaces.invitations import invalid_invitation, invitation_accept
from apps.workspaces.models import Membership, Role
from apps.workspaces.selectors import invitation_valid


def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """GET: what the link offers and how to take it. POST: accept (signed in) or sign up and join."""
    found = invitation_valid(token=token)
    if found is None:
        return _invalid(request)
    signed_in = request.user.is_authenticated
    form = SignUpForm(request.POST if request.method == "POST" and not signed_in else None)
    if request.method == "POST":
        if signed_in:
            return _accept(request, token)
        wait = address_blocked(request=request)
        if wait is not None:
            response = render(request, "registration/rate_limited.html", {"retry_after": wait}, status=429)
            response["Retry-After"] = str(wait)
            return no_store(response)
        if form.is_valid():
            try:
                with transaction.atomic():  # no account is left behind when the link was taken meanwhile
                    user = form.save()
                    membership = invitation_accept(token=token, user=user)
            except DomainError:
                return _invalid(request)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return _joined(request, membership)
        if form.username_taken():
            address_failure_record(request=request)
    context = {
        "invitation": found,
        "role": Role(found.role).label.lower(),
        "form": form,
        "login_url": f"{reverse('login')}?next={request.path}",
    }
    return no_store(render(request, "web/invitations/page.html", context, status=422 if form.errors else 200))


def no_store(response: HttpResponse) -> HttpResponse:
    """`no-store`, and no "Unprocessable Entity: /invite/<token>/" line in the log: Django logs the path of
    every 4xx answer, and this path is a secret while the link works (a sign-up with errors is a 422)."""
    response._has_been_logged = True  # type: ignore[attr-defined]  # read by django.utils.log.log_response
    return _no_store(response)


def _accept(request: HttpRequest, token: str) -> HttpResponse:
    try:
        membership = invitation_accept(token=token, user=request.user)  # type: ignore[arg-type]
    except DomainError:
        return _invalid(request)
    return _joined(request, membership)


def _joined(request: HttpRequest, membership: Membership) -> HttpResponse:
    """Into the workspace just joined, saying with which role."""
    workspace_switch(request=request, slug=membership.workspace.slug)
    messages.success(request, f"You joined {membership.workspace.name} as {Role(membership.role).label.lower()}.")
    return no_store(HttpResponseRedirect(reverse("web:dashboard")))


def _invalid(request: HttpRequest) -> HttpResponse:
    context = {"message": invalid_invitation().message}
    return no_store(render(request, "web/invitations/invalid.html", context, status=404))
