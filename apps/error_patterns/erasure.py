"""Erasure of attempts and error patterns (apps/core/erasure.py) that hold a text match.

Their texts are stored redacted, but what is left may still name the erased subject: an attempt whose
error, signature or solution holds the text is deleted, and so is a pattern whose signature, excerpt
or solution does (with its hint injections; the attempts it was captured from point to none).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from apps.core.erasure import SOURCE, ErasureRun, eraser
from apps.error_patterns.models import Attempt, ErrorPattern


def error_patterns_erase(run: ErasureRun) -> None:
    text = run.target.text
    if not text:
        return
    attempts = Attempt.objects.filter(workspace_id=run.workspace_id).filter(
        Q(error__icontains=text) | Q(signature__icontains=text) | Q(solution__icontains=text)
    )
    patterns = ErrorPattern.objects.filter(workspace_id=run.workspace_id).filter(
        Q(signature__icontains=text) | Q(error_excerpt__icontains=text) | Q(solution__icontains=text)
    )
    found_attempts, found_patterns = attempts.count(), patterns.count()
    run.count("attempts", found=found_attempts)
    run.count("error_patterns", found=found_patterns)
    if run.dry_run:
        return
    with transaction.atomic():
        removed_attempts, _ = attempts.delete()
        removed_patterns = patterns.count()
        patterns.delete()
    run.count("attempts", removed=removed_attempts)
    run.count("error_patterns", removed=removed_patterns)


def register() -> None:
    eraser(SOURCE, "error_patterns", error_patterns_erase)
