"""Supersession proposals of the whole workspace: the detector's candidates (old item, new item,
similarity, reason, detector), pending first; operators and admins accept or reject each (HTMX POST,
the list swapped in place), viewers read. The layer page lists its own pending ones with the same rows."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.core.errors import DomainError, NotFound
from apps.core.htmx import is_htmx, render_page_or_partial
from apps.layers.models import ProposalState
from apps.layers.selectors import proposal_get
from apps.layers.supersession import proposal_decide
from apps.web.access import workspace_view
from apps.web.selectors.proposals import proposals_page
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role

PAGE = "web/supersessions/page.html"
DECISIONS = ("accept", "reject")


def decide(request: HttpRequest, access: WorkspaceAccess, *, proposal_id: int, layer_id: int | None = None) -> str:
    """Accept or reject a proposal of the current workspace (of `layer_id`, when given) as the signed-in
    person; what was done, in words (a proposal decided meanwhile: the service's message)."""
    assert access.current is not None
    accept = request.POST.get("decision") == "accept"
    try:
        proposal = proposal_get(workspace=access.current, proposal_id=proposal_id)
    except NotFound as exc:
        raise Http404("No such proposal in this workspace.") from exc
    if layer_id is not None and proposal.layer_id != layer_id:
        raise Http404("No such proposal on this layer.")
    try:
        proposal_decide(proposal=proposal, accept=accept, decided_by=f"user {request.user.get_username()}")
    except DomainError as exc:  # decided meanwhile (proposal_decided)
        return exc.message
    if accept:
        return f"#{proposal.new_id} now supersedes #{proposal.old_id}."
    return f"Kept #{proposal.old_id} beside #{proposal.new_id}."


def _state(request: HttpRequest) -> str:
    """The state shown: pending unless asked (`all`: every state)."""
    asked = request.GET.get("state", ProposalState.PENDING)
    return "" if asked == "all" else asked if asked in ProposalState.values else ProposalState.PENDING


def _list(request: HttpRequest, access: WorkspaceAccess, *, state: str, done: str = "") -> HttpResponse:
    assert access.current is not None
    found = proposals_page(workspace=access.current, state=state, number=request.GET.get("page", "1"))
    context = {
        "rows": found.rows,
        "page": found.page,
        "state": state or "all",
        "states": [*ProposalState.choices, ("all", "All")],
        "done": done,
        "crumbs": [("Supersessions", None)],
    }
    return render_page_or_partial(request, PAGE, "proposals", context)


@workspace_view(replica=True)
def supersessions(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    return _list(request, access, state=_state(request))


@require_POST
@workspace_view(Role.OPERATOR)
def supersession_decide(request: HttpRequest, access: WorkspaceAccess, proposal_id: int) -> HttpResponse:
    """`decision` = accept | reject; answers the pending list (HTMX) or goes back to the page."""
    if request.POST.get("decision") not in DECISIONS:
        return HttpResponse("decision must be accept or reject", status=400)
    done = decide(request, access, proposal_id=proposal_id)
    if not is_htmx(request):
        messages.success(request, done)
        return HttpResponseRedirect(reverse("web:supersessions"))
    return _list(request, access, state=ProposalState.PENDING, done=done)
