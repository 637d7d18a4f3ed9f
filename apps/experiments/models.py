"""Question sets, experiment runs and each question's result on each side of a run."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class QuestionSet(models.Model):
    """Questions with the items that answer them (external ids), uploaded as JSON lines or saved from
    the console's search; asked again by every run that names it."""

    class Source(models.TextChoices):
        UPLOAD = "upload", "Uploaded"
        CONSOLE = "console", "Console search"

    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="question_sets")
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.UPLOAD)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="uniq_question_set_name")]

    def __str__(self) -> str:
        return self.name


class SetQuestion(models.Model):
    """One question of a set and its expected items' external ids (none: asked, not scored)."""

    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField()
    question = models.TextField()
    expected = models.JSONField(default=list)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["question_set", "position"], name="uniq_set_question_position")]

    def __str__(self) -> str:
        return self.question[:80]


class ExperimentRun(models.Model):
    """A set asked at one layer and budget with two profiles (A and B; "" is the defaults), in the
    background. Invariant: `done` counts the questions whose two results are stored."""

    class State(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        STOPPED = "stopped", "Stopped"

    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="experiment_runs")
    question_set = models.ForeignKey(QuestionSet, on_delete=models.CASCADE, related_name="runs")
    layer = models.ForeignKey("layers.Layer", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    layer_name = models.CharField(max_length=200)  # kept for the history once the layer is gone
    profile_a = models.CharField(max_length=100, blank=True)
    profile_b = models.CharField(max_length=100, blank=True)
    token_budget = models.PositiveIntegerField(null=True, blank=True)  # None: each profile's own
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    stop_requested = models.BooleanField(default=False)  # the run stops before its next question
    warnings = models.JSONField(default=list)  # the answers' distinct warnings (an unknown profile, a failed part)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["workspace", "-created_at"], name="experiment_run_recent")]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.profile_a or 'defaults'} / {self.profile_b or 'defaults'}"


class QuestionResult(models.Model):
    """One question asked on one side of a run: its recall (None: no expected items), tokens, latency,
    the expected items it missed and the trace of the page run that answered it."""

    class Side(models.TextChoices):
        A = "a", "A"
        B = "b", "B"

    run = models.ForeignKey(ExperimentRun, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(SetQuestion, on_delete=models.CASCADE, related_name="+")
    side = models.CharField(max_length=1, choices=Side.choices)
    recall = models.FloatField(null=True, blank=True)
    missed = models.JSONField(default=list)
    tokens = models.PositiveIntegerField()
    chunks = models.PositiveIntegerField()
    elapsed_ms = models.FloatField()
    partial = models.BooleanField(default=False)
    trace_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["question__position", "side"]
        constraints = [models.UniqueConstraint(fields=["run", "question", "side"], name="uniq_question_result")]

    def __str__(self) -> str:
        return f"{self.side}: {self.recall}"
