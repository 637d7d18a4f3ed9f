"""The redaction area: the workspace's allow-list of false positives and a box to try the redactor.

Anyone may read the list and try a text (it changes nothing; the text is neither stored nor logged).
Only workspace admins add or delete entries: an entry lets the redactor keep a value it would remove
from everything agents send, a security setting beside the API keys. Every rule is the service's
(`allowlist_entry_create`: RE2 patterns, no match-everything, at most 50 patterns, no duplicates).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.errors import DomainError, NotFound
from apps.core.htmx import render_page_or_partial
from apps.redaction.allowpatterns import MAX_PATTERN_LENGTH, MAX_PATTERNS
from apps.redaction.models import AllowKind
from apps.redaction.selectors import allowlist_entries, allowlist_entry_get
from apps.redaction.services import allowlist_entry_create, allowlist_entry_delete, text_redact
from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

PAGE = "web/redaction/page.html"
MAX_TRY_CHARS = 200_000  # as POST /api/v1/redact/


class AllowForm(forms.Form):
    kind = forms.ChoiceField(choices=AllowKind.choices, initial=AllowKind.EXACT)
    value = forms.CharField(
        max_length=MAX_PATTERN_LENGTH,
        strip=False,
        help_text="the exact value, or a regular expression a whole finding must match (RE2: no lookarounds)",
    )
    note = forms.CharField(max_length=200, required=False, help_text="why it is not a secret")


class TryForm(forms.Form):
    text = forms.CharField(
        max_length=MAX_TRY_CHARS, strip=False, widget=forms.Textarea(attrs={"rows": 4}), label="Text to redact"
    )


def _context(access: WorkspaceAccess, **extra: Any) -> dict[str, Any]:
    assert access.current is not None
    return {
        "entries": allowlist_entries(workspace=access.current),
        "form": AllowForm(auto_id="allow-%s"),
        "try_form": TryForm(auto_id="try-%s"),
        "max_patterns": MAX_PATTERNS,
        "crumbs": [("Redaction", None)],
        **extra,
    }


@require_http_methods(["GET", "POST"])
@workspace_view()
def redaction(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The allow-list; a POST (admins) adds an entry, the service's refusal beside the value (422)."""
    assert access.current is not None
    if request.method != "POST":
        return render_page_or_partial(request, PAGE, "allowlist", _context(access))
    if not access.can_admin:
        raise PermissionDenied(f"Only workspace admins of {access.current.name} may change the allow-list.")
    form = AllowForm(request.POST, auto_id="allow-%s")
    if form.is_valid():
        try:
            entry = allowlist_entry_create(workspace=access.current, **form.cleaned_data)
        except DomainError as exc:
            form.add_error("value", exc.message)
        else:
            added = f"Added to the allow-list: {entry.get_kind_display().lower()} {entry.value}."
            if not request.htmx:  # type: ignore[attr-defined]
                messages.success(request, added)
                return HttpResponseRedirect(reverse("web:redaction"))
            return render_page_or_partial(request, PAGE, "allowlist", _context(access, added=added))
    return render_page_or_partial(request, PAGE, "allowlist", _context(access, form=form), status=422)


@require_POST
@workspace_view(Role.ADMIN)
def entry_remove(request: HttpRequest, access: WorkspaceAccess, entry_id: int) -> HttpResponse:
    assert access.current is not None
    try:
        entry = allowlist_entry_get(workspace=access.current, entry_id=entry_id)
    except NotFound as exc:
        raise Http404("No such allow-list entry in this workspace.") from exc
    allowlist_entry_delete(entry=entry)
    removed = f"Removed from the allow-list: {entry.value}."
    if not request.htmx:  # type: ignore[attr-defined]
        messages.success(request, removed)
        return HttpResponseRedirect(reverse("web:redaction"))
    return render_page_or_partial(request, PAGE, "allowlist", _context(access, added=removed))


@require_POST
@workspace_view()
def redaction_try(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The text as the redactor stores it, with the allow-list applied; nothing stored."""
    assert access.current is not None
    form = TryForm(request.POST, auto_id="try-%s")
    result = None
    if form.is_valid():
        try:
            result = text_redact(workspace_id=access.current.pk, text=form.cleaned_data["text"])
        except DomainError as exc:  # text_too_costly
            form.add_error("text", exc.message)
    status = 200 if form.is_valid() else 422
    return render_page_or_partial(request, PAGE, "trial", _context(access, try_form=form, result=result), status=status)
