"""The experiments area: question sets (uploaded as JSON lines), runs of a set with two profiles in the
background, and each run's figures side by side and per question.

Operators (and developers and admins) upload sets and start runs; every member reads them. A run's
page polls its progress over HTMX while it runs (every hx-get beside a plain link that reloads).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from apps.core.errors import DomainError, NotFound
from apps.core.htmx import render_page_or_partial
from apps.experiments.models import ExperimentRun, QuestionSet
from apps.experiments.questions import MAX_BYTES, QuestionSetInvalid
from apps.experiments.selectors import (
    question_set_get,
    question_sets_list,
    run_get,
    run_results,
    run_stalled,
    runs_list,
    set_questions,
)
from apps.experiments.services import (
    experiment_start,
    experiment_stop,
    question_set_from_records,
    question_set_upload,
)
from apps.layers.selectors import layer_get
from apps.profiles.selectors import profiles_list
from apps.web.access import workspace_view
from apps.web.console.views.records import filter_form
from apps.web.forms.experiment import ExperimentForm, QuestionSetUploadForm
from apps.web.layer_tree import layer_rows
from apps.web.selectors.experiments import profile_label, recall_chart
from apps.web.workspace_choice import WorkspaceAccess
from apps.workspaces.models import Role, Workspace

LIST = "web/experiments/list.html"
UPLOAD_ERROR_FIELDS = {"duplicate_question_set": "name", "invalid_name": "name"}


def _run_form(workspace: Workspace, data: Any = None, **kwargs: Any) -> ExperimentForm:
    sets = [(s.pk, f"{s.name} ({s.size} questions)") for s in question_sets_list(workspace=workspace)]  # type: ignore[attr-defined]
    profiles = list(profiles_list(workspace=workspace).values_list("name", flat=True))
    return ExperimentForm(data, sets=sets, layers=layer_rows(workspace=workspace), profiles=profiles, **kwargs)


def _list_context(
    access: WorkspaceAccess, *, upload: QuestionSetUploadForm | None = None, run_form: ExperimentForm | None = None
) -> dict[str, Any]:
    workspace = access.current
    assert workspace is not None
    return {
        "sets": question_sets_list(workspace=workspace),
        "runs": runs_list(workspace=workspace),
        "upload": upload or QuestionSetUploadForm(),
        "run_form": run_form or _run_form(workspace),
        "crumbs": [("Experiments", None)],
    }


@require_GET
@workspace_view()
def experiments(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The sets, the runs newest first, and (for operators) the forms to upload a set and start a run."""
    return render(request, LIST, _list_context(access))


@require_POST
@workspace_view(Role.OPERATOR)
def set_upload(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """A set from a JSON-lines file; every problem of the file beside the file field (422), never a 500."""
    workspace = access.current
    assert workspace is not None
    form = QuestionSetUploadForm(request.POST, request.FILES)
    if form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            data = upload.read(MAX_BYTES + 1)  # one byte over is enough to refuse it
            created = question_set_upload(
                workspace=workspace, name=form.cleaned_data["name"], data=data, created_by=request.user
            )
        except QuestionSetInvalid as exc:
            form.add_error("file", f"{exc.message}:")
            for error in exc.errors:
                form.add_error("file", str(error))
        except DomainError as exc:
            form.add_error(UPLOAD_ERROR_FIELDS.get(exc.code), f"{exc.message} ({exc.code})")
        else:
            messages.success(
                request, f"Question set {created.name} saved: {len(set_questions(question_set=created))} questions."
            )
            return HttpResponseRedirect(reverse("web:experiment-set", args=[created.pk]))
    return render(request, LIST, _list_context(access, upload=form), status=422)


@require_POST
@workspace_view(Role.DEVELOPER)
def set_from_console(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """The console's search (its filters, posted back) saved as a set: each query once, expecting the
    items its agent reported it used. Developers and admins: they are the ones who see the console."""
    workspace = access.current
    assert workspace is not None
    data = request.POST.copy()
    name = data.pop("set_name", [""])[-1]
    data.pop("csrfmiddlewaretoken", None)
    back = f"{reverse('console:records')}?{data.urlencode()}"
    form = filter_form(workspace=workspace, data=data)
    if not form.is_valid():
        messages.error(request, "Those filters were not understood; nothing was saved.")
        return HttpResponseRedirect(back)
    try:
        created = question_set_from_records(
            workspace=workspace, name=name, filters=form.filters(), created_by=request.user
        )
    except DomainError as exc:
        messages.error(request, f"Nothing was saved: {exc.message} ({exc.code}).")
        return HttpResponseRedirect(back)
    size = len(set_questions(question_set=created))
    messages.success(request, f"Question set {created.name} saved from the console: {size} questions.")
    return HttpResponseRedirect(reverse("web:experiment-set", args=[created.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def run_start(request: HttpRequest, access: WorkspaceAccess) -> HttpResponse:
    """Start a run in the background and go to its page, which shows its progress."""
    workspace = access.current
    assert workspace is not None
    form = _run_form(workspace, request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            run = experiment_start(
                workspace=workspace,
                question_set=question_set_get(workspace=workspace, set_id=data["question_set"]),
                layer=layer_get(workspace=workspace, layer_id=data["layer"]),
                profile_a=data["profile_a"],
                profile_b=data["profile_b"],
                token_budget=data["token_budget"],
                created_by=request.user,
            )
        except DomainError as exc:
            form.add_error(None, f"{exc.message} ({exc.code})")
        else:
            return HttpResponseRedirect(reverse("web:experiment-run", args=[run.pk]))
    return render(request, LIST, _list_context(access, run_form=form), status=422)


@require_POST
@workspace_view(Role.OPERATOR)
def run_again(request: HttpRequest, access: WorkspaceAccess, run_id: int) -> HttpResponse:
    """The same set, layer, profiles and budget asked again now: a new run beside the old one."""
    workspace = access.current
    assert workspace is not None
    earlier = _run(access, run_id)
    if earlier.layer is None:
        messages.error(request, "The layer this run asked at was deleted; start a new run at another layer.")
        return HttpResponseRedirect(reverse("web:experiment-run", args=[earlier.pk]))
    run = experiment_start(
        workspace=workspace,
        question_set=earlier.question_set,
        layer=earlier.layer,
        profile_a=earlier.profile_a,
        profile_b=earlier.profile_b,
        token_budget=earlier.token_budget,
        created_by=request.user,
    )
    return HttpResponseRedirect(reverse("web:experiment-run", args=[run.pk]))


@require_POST
@workspace_view(Role.OPERATOR)
def run_stop(request: HttpRequest, access: WorkspaceAccess, run_id: int) -> HttpResponse:
    """Stop a run before its next question; what it asked so far stays."""
    experiment_stop(run=_run(access, run_id))
    return HttpResponseRedirect(reverse("web:experiment-run", args=[run_id]))


def _run(access: WorkspaceAccess, run_id: int) -> ExperimentRun:
    assert access.current is not None
    try:
        return run_get(workspace=access.current, run_id=run_id)
    except NotFound as exc:
        raise Http404("No such experiment run in this workspace.") from exc


def _set(access: WorkspaceAccess, set_id: int) -> QuestionSet:
    assert access.current is not None
    try:
        return question_set_get(workspace=access.current, set_id=set_id)
    except NotFound as exc:
        raise Http404("No such question set in this workspace.") from exc


@require_GET
@workspace_view()
def question_set(request: HttpRequest, access: WorkspaceAccess, set_id: int) -> HttpResponse:
    """A set's questions, its runs and each profile's recall on it, run after run."""
    workspace = access.current
    assert workspace is not None
    found = _set(access, set_id)
    runs = runs_list(workspace=workspace, question_set=found)
    context = {
        "set": found,
        "questions": set_questions(question_set=found),
        "runs": runs,
        "chart": recall_chart(runs=runs),
        "run_form": _run_form(workspace, initial={"question_set": found.pk}),
        "crumbs": [("Experiments", reverse("web:experiments")), (found.name, None)],
    }
    return render(request, "web/experiments/set.html", context)


@require_GET
@workspace_view()
def run(request: HttpRequest, access: WorkspaceAccess, run_id: int) -> HttpResponse:
    """A run: its progress while it runs (HTMX polls #run-body), then both sides' figures and every question."""
    found = _run(access, run_id)
    a, b, rows = run_results(run=found)
    context = {
        "run": found,
        "a": a,
        "b": b,
        "a_label": profile_label(found.profile_a),
        "b_label": profile_label(found.profile_b),
        "rows": rows,
        "active": found.state in (ExperimentRun.State.QUEUED, ExperimentRun.State.RUNNING),
        "stalled": run_stalled(run=found),
        "crumbs": [
            ("Experiments", reverse("web:experiments")),
            (found.question_set.name, reverse("web:experiment-set", args=[found.question_set_id])),
            (f"Run {found.pk}", None),
        ],
    }
    return render_page_or_partial(request, "web/experiments/run.html", "run-body", context)
