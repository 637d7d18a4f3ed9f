"""The error patterns area: list, detail with the redacted excerpt and solution; operators edit and delete."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count, DateTimeField, ExpressionWrapper, F
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from apps.core.errors import DomainError
from apps.error_patterns.models import ErrorPattern
from apps.error_patterns.selectors import patterns_list
from apps.error_patterns.services import pattern_delete, pattern_update
from apps.web.access import workspace_view
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role


class PatternForm(forms.Form):
    solution = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}))
    confidence = forms.FloatField(min_value=0.0, max_value=1.0, widget=forms.NumberInput(attrs={"step": "0.01"}))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields[
            "confidence"
        ].help_text = f"0 to 1; its hint is injected only above {hint_floor()} (ERROR_HINT_MIN_CONFIDENCE)"


def hint_floor() -> str:
    """The confidence a pattern needs before its hint is injected, as the pages show it."""
    return f"{settings.ERROR_HINT_MIN_CONFIDENCE:g}"


def _rounded(confidence: float) -> float:
    """A confidence as people read it: 0.6, not 0.6000000000000001 (scores are multiplied on each failure)."""
    return round(confidence, 2)


def _expires_at() -> ExpressionWrapper:
    """When the hourly sweep removes a pattern unless it is seen again (error_patterns.services.patterns_expire)."""
    ttl = timedelta(days=settings.ERROR_PATTERN_TTL_DAYS)
    return ExpressionWrapper(F("last_seen") + ttl, output_field=DateTimeField())


@workspace_view(replica=True)
def patterns(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """Signature, confidence, occurrences, hints injected and failures after a hint, last seen, expiry."""
    assert access.current is not None
    rows = patterns_list(workspace=access.current, signature=request.GET.get("q", "").strip()).annotate(
        hints=Count("injections"), expires_at=_expires_at()
    )
    page = Paginator(rows, 50).get_page(request.GET.get("page", "1"))
    context = {
        "page": page,
        "q": request.GET.get("q", ""),
        "ttl_days": settings.ERROR_PATTERN_TTL_DAYS,
        "hint_floor": hint_floor(),
    }
    return render(request, "web/patterns/list.html", {**context, "crumbs": [("Patterns", None)]})


def _pattern(access: WorkspaceAccess, pattern_id: int) -> ErrorPattern:
    assert access.current is not None
    pattern = (
        patterns_list(workspace=access.current)
        .filter(pk=pattern_id)
        .annotate(hints=Count("injections"), expires_at=_expires_at())
        .first()
    )
    if pattern is None:
        raise Http404("No such pattern in this workspace.")
    return pattern


@require_http_methods(["GET", "POST"])
@workspace_view(replica=True)
def pattern(request: HttpRequest, access: WorkspaceAccess, pattern_id: int) -> HttpResponse:
    current = _pattern(access, pattern_id)
    form = PatternForm(initial={"solution": current.solution, "confidence": _rounded(current.confidence)})
    status = 200
    if request.method == "POST":
        if not access.can_edit:
            raise PermissionDenied("Only operators may change error patterns.")
        form = PatternForm(request.POST)
        if form.is_valid():
            try:
                pattern_update(pattern=current, **form.cleaned_data)
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, "Pattern saved.")
                return HttpResponseRedirect(reverse("web:pattern", args=[current.pk]))
        status = 422
    crumbs = [("Patterns", reverse("web:patterns")), (f"Pattern {current.pk}", None)]
    context = {
        "pattern": current,
        "form": form,
        "ttl_days": settings.ERROR_PATTERN_TTL_DAYS,
        "hint_floor": hint_floor(),
        "hinted": current.confidence > settings.ERROR_HINT_MIN_CONFIDENCE,
        "crumbs": crumbs,
    }
    return render(request, "web/patterns/detail.html", context, status=status)


@require_POST
@workspace_view(Role.OPERATOR)
def pattern_remove(request: HttpRequest, access: WorkspaceAccess, pattern_id: int) -> HttpResponse:
    pattern_delete(pattern=_pattern(access, pattern_id))
    messages.success(request, "Pattern deleted.")
    return HttpResponseRedirect(reverse("web:patterns"))
