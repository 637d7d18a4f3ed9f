"""Celery tasks of the experiments: they take ids and call one service."""

from __future__ import annotations

from celery import shared_task

from apps.core import background


@shared_task
def experiment_run(run_id: int) -> str:
    """Ask a queued run's questions (apps/experiments/run.py); returns the run's state."""
    from apps.experiments.run import experiment_execute

    return experiment_execute(run_id=run_id)


# A run asks hundreds of questions: in process it has a thread of its own, so the summaries and the
# bookkeeping do not wait behind it.
background.own_lane(experiment_run, "experiments")
