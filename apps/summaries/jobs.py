"""Summarize on request without waiting out a failing LLM: the retries run in the background.

`POST /api/v1/layers/{id}/summarize/` (and the layer page's button) answer at once. With the LLM
failing (a failure within SUMMARY_LLM_FAILING_SECONDS) nothing is called in the request: a job is
queued and the answer is "pending" with the job's state. Otherwise one attempt is made; if it
fails, the run degrades as any run does (stored summaries marked stale, or truncated content) and
the job is queued for the retries (1, 2, 4 s). The job (`SummaryJob`, one per layer) runs
`layer_summarize(force=True)` with its retries on the background worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from apps.core import background
from apps.layers.models import Layer
from apps.layers.selectors import layer_find
from apps.summaries import health
from apps.summaries.models import SummaryJob
from apps.summaries.services import DEGRADED, SummarizeResult, layer_summarize

PENDING = "pending"
ACTIVE = (SummaryJob.State.QUEUED, SummaryJob.State.RUNNING)


@dataclass(frozen=True)
class Requested:
    """What a summarize request did, and the background job it left (None: nothing left to do)."""

    result: SummarizeResult
    job: SummaryJob | None


def layer_summarize_request(*, layer: Layer) -> Requested:
    """Summarize now when the provider answers; when it fails, answer at once and retry in the background."""
    now = timezone.now()
    if settings.SUMMARY_PROVIDER == "llm" and health.failing(workspace_id=layer.workspace_id, now=now):
        job = job_queue(layer=layer, error="the LLM failed recently")
        warning = "llm_unavailable: the LLM is failing; the summaries are regenerated in the background (see `job`)"
        result = SummarizeResult(layer_id=layer.pk, status=PENDING, reason="llm_unavailable", warnings=[warning])
        return Requested(result=result, job=job)
    result = layer_summarize(layer=layer, force=True, retries=False)
    if result.status != DEGRADED:
        return Requested(result=result, job=None)
    job = job_queue(layer=layer, error="; ".join(result.warnings))
    result.warnings.append("llm_unavailable: retrying in the background (see `job`)")
    return Requested(result=result, job=job)


def job_queue(*, layer: Layer, error: str) -> SummaryJob:
    """Queue the layer's background run (once: a job queued or running already is the one)."""
    now = timezone.now()
    job, created = SummaryJob.objects.get_or_create(
        layer=layer,
        defaults={"state": SummaryJob.State.QUEUED, "requested_at": now, "updated_at": now, "last_error": error},
    )
    if not created and job.state in ACTIVE:
        return job
    if not created:
        job.state, job.requested_at, job.updated_at, job.last_error = SummaryJob.State.QUEUED, now, now, error
        job.save()
    from apps.summaries.tasks import summarize_layer_job

    background.enqueue(summarize_layer_job, layer.pk)
    return job


def layer_summarize_job(*, layer_id: int) -> str:
    """The background run of a queued job: the forced summarize with its retries; returns the job's state."""
    layer = layer_find(layer_id=layer_id)
    if layer is None:
        return "gone"
    jobs = SummaryJob.objects.filter(layer_id=layer_id)
    jobs.update(state=SummaryJob.State.RUNNING, runs=F("runs") + 1, updated_at=timezone.now())
    try:
        result = layer_summarize(layer=layer, force=True)
    except Exception as exc:
        jobs.update(state=SummaryJob.State.FAILED, last_error=str(exc)[:2000], updated_at=timezone.now())
        raise
    failed = result.status == DEGRADED
    state = SummaryJob.State.FAILED if failed else SummaryJob.State.DONE
    jobs.update(state=state, last_error="; ".join(result.warnings)[:2000] if failed else "", updated_at=timezone.now())
    return str(state)


def job_json(job: SummaryJob | None) -> dict[str, Any] | None:
    if job is None:
        return None
    return {
        "state": job.state,
        "runs": job.runs,
        "last_error": job.last_error,
        "requested_at": job.requested_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }


def job_of(*, layer_id: int) -> SummaryJob | None:
    return SummaryJob.objects.filter(layer_id=layer_id).first()
