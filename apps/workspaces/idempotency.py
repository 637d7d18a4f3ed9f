"""`Idempotency-Key` on API POSTs: a repeated key gets the first answer instead of a second write.

The middleware finds the workspace from the Bearer key (no key or a bad one: the request passes
through and the view answers 401), claims (workspace, key) with one insert, runs the view and
stores its answer; a 5xx answer is not stored, so the retry runs again. A repeat with another
body is a 422 `idempotency_key_reused`; a repeat while the first still runs a 409
`idempotency_key_in_progress` (a claim older than IN_PROGRESS_SECONDS counts as abandoned).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from apps.workspaces.models import IdempotencyKey
from apps.workspaces.selectors import api_key_get_active

HEADER = "Idempotency-Key"
IN_PROGRESS_SECONDS = 60


def _error(status: int, code: str, message: str) -> HttpResponse:
    body = {"error": {"code": code, "message": message, "details": {}}}
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    if status == 409:
        response["Retry-After"] = "1"
    return response


def _workspace_id(request: HttpRequest) -> int | None:
    parts = request.headers.get("Authorization", "").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    key = api_key_get_active(secret=parts[1])
    return key.workspace_id if key is not None else None


def _fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256(f"{request.method} {request.get_full_path()}\n".encode())
    digest.update(request.body)
    return digest.hexdigest()


def _claim(*, workspace_id: int, key: str, fingerprint: str) -> IdempotencyKey | None:
    """Claim the key for this request (None), or the row of an earlier request with it."""
    now = timezone.now()
    expired = now - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
    abandoned = now - timedelta(seconds=IN_PROGRESS_SECONDS)
    try:
        with transaction.atomic():
            IdempotencyKey.objects.create(workspace_id=workspace_id, key=key, fingerprint=fingerprint, created_at=now)
            return None
    except IntegrityError:
        pass
    with transaction.atomic():
        row = IdempotencyKey.objects.select_for_update().get(workspace_id=workspace_id, key=key)
        stale = row.created_at < expired or (row.status_code is None and row.created_at < abandoned)
        if not stale:
            return row
        row.fingerprint, row.status_code, row.body, row.content_type, row.created_at = fingerprint, None, b"", "", now
        row.save()
        return None


class IdempotencyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        key = request.headers.get(HEADER)
        if key is None or request.method != "POST" or not request.path.startswith("/api/"):
            return self.get_response(request)
        if not 1 <= len(key) <= 255 or not (key.isascii() and key.isprintable()):
            return _error(400, "invalid_idempotency_key", f"{HEADER} must be 1 to 255 printable ASCII characters")
        workspace_id = _workspace_id(request)
        if workspace_id is None:
            return self.get_response(request)
        fingerprint = _fingerprint(request)
        earlier = _claim(workspace_id=workspace_id, key=key, fingerprint=fingerprint)
        if earlier is not None:
            if earlier.fingerprint != fingerprint:
                return _error(422, "idempotency_key_reused", f"this {HEADER} was used for another request")
            if earlier.status_code is None:
                return _error(409, "idempotency_key_in_progress", f"a request with this {HEADER} is still running")
            replay = HttpResponse(bytes(earlier.body), status=earlier.status_code, content_type=earlier.content_type)
            replay["Idempotent-Replayed"] = "true"
            return replay
        try:
            response = self.get_response(request)
        except BaseException:
            IdempotencyKey.objects.filter(workspace_id=workspace_id, key=key).delete()
            raise
        if response.status_code >= 500 or response.streaming:
            IdempotencyKey.objects.filter(workspace_id=workspace_id, key=key).delete()
        else:
            IdempotencyKey.objects.filter(workspace_id=workspace_id, key=key).update(
                status_code=response.status_code,
                content_type=response.get("Content-Type", ""),
                body=response.content,
            )
        return response
