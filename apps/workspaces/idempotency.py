"""`Idempotency-Key` on API POSTs: a repeated key gets the first answer instead of a second write.

A key belongs to the API key that sent it, and counts only once that API key is known to be active
and to carry the scope the view needs (no key, a bad one or a missing scope: the request passes
through and the view answers 401 or 403, replaying nothing). While the first request runs, a
session-level PostgreSQL advisory lock on its own connection holds the key: a repeat meanwhile is a
409 `idempotency_key_in_progress` however long the first one takes, and a process that dies takes
its connections and so its locks with it (`client_connection_check_interval` ends a dead client's
running statement within a second), so a claim found without its lock is taken over by the retry
at once. The answer is stored encrypted (AES-GCM) under a key derived from the API key's secret and
the idempotency key, neither of which the database holds; a 5xx answer or a stream is not stored
(the retry runs again). A view whose answer carries a secret shown only once names a stand-in to
store instead (`replay_instead`): a repeated key creation answers 409 `api_key_secret_not_replayed`.
A repeat with another body is a 422 `idempotency_key_reused`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils import timezone

from apps.core import db_health
from apps.core.error_catalogue import ErrorCode
from apps.core.exceptions import error_body
from apps.core.sealing import key_from, seal, unseal
from apps.workspaces.errors import IDEMPOTENCY_KEY_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED, INVALID_IDEMPOTENCY_KEY
from apps.workspaces.models import IdempotencyKey
from apps.workspaces.permissions import required_scope_of
from apps.workspaces.selectors import api_key_get_active

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
LOCK_NAMESPACE = 0x4944 << 48  # "ID": idempotency keys, apart from any other advisory lock
CLAIM = "_idempotency_claim"  # the request's attribute while it holds a key
REPLAY = "idempotency_replay"  # a response's attribute: (status, body) to store instead of it


@dataclass(frozen=True)
class Claim:
    """A key this request holds (its advisory lock taken on this thread's connection)."""

    api_key_id: int
    key: str
    lock: int
    cipher: bytes  # AES-256 key of the stored answer


def replay_instead(response: HttpResponseBase, *, code: ErrorCode, message: str, details: dict[str, Any]) -> None:
    """Store this error as the answer to repeats of the request instead of `response`, whose body
    carries something shown only once (a new API key's secret)."""
    setattr(response, REPLAY, (code.status, json.dumps(error_body(code.code, message, details)).encode()))


def _error(code: ErrorCode, message: str) -> HttpResponse:
    body = json.dumps(error_body(code.code, message))
    response = HttpResponse(body, status=code.status, content_type="application/json")
    if code.status == 409:
        response["Retry-After"] = "1"
    return response


def _secret(request: HttpRequest) -> str | None:
    parts = request.headers.get("Authorization", "").split()
    return parts[1] if len(parts) == 2 and parts[0].lower() == "bearer" else None


def _fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256(f"{request.method} {request.get_full_path()}\n".encode())
    digest.update(request.body)
    return digest.hexdigest()


def _lock_id(api_key_id: int, key: str) -> int:
    digest = hashlib.sha256(f"{api_key_id}\x00{key}".encode()).digest()
    return LOCK_NAMESPACE | int.from_bytes(digest[:6], "big")


def _cipher(secret: str, key: str) -> bytes:
    return key_from("contextarch idempotency", secret, key)


def _seal(claim: Claim, body: bytes) -> bytes:
    return seal(claim.cipher, body, bound_to=f"{claim.api_key_id}\x00{claim.key}".encode())


def _open(claim: Claim, sealed: bytes) -> bytes | None:
    return unseal(claim.cipher, sealed, bound_to=f"{claim.api_key_id}\x00{claim.key}".encode())


def _try_lock(lock: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", [lock])
        row = cur.fetchone()
    return bool(row and row[0])


def _unlock(claim: Claim) -> None:
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [claim.lock])
    except DatabaseError:  # the connection is gone, and its locks with it
        log.warning("could not release idempotency key %r", claim.key, exc_info=True)


def _claim(claim: Claim, fingerprint: str) -> HttpResponse | None:
    """Take the key for this request (None), or the answer for a repeat: the stored one, or an error."""
    if not _try_lock(claim.lock):
        return _error(IDEMPOTENCY_KEY_IN_PROGRESS, f"a request with this {HEADER} is still running")
    taken = False
    try:
        row = IdempotencyKey.objects.filter(api_key_id=claim.api_key_id, key=claim.key).first()
        fresh = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
        if row is not None and row.status_code is not None and row.created_at >= fresh:
            if row.fingerprint != fingerprint:
                return _error(IDEMPOTENCY_KEY_REUSED, f"this {HEADER} was used for another request")
            body = _open(claim, bytes(row.body))
            if body is not None:
                replay = HttpResponse(body, status=row.status_code, content_type=row.content_type)
                replay["Idempotent-Replayed"] = "true"
                return replay
            log.warning("the stored answer of idempotency key %r cannot be read; running the request", claim.key)
        # No row, an expired one, or one whose request ended without answering (its process died).
        IdempotencyKey.objects.update_or_create(
            api_key_id=claim.api_key_id,
            key=claim.key,
            defaults={
                "fingerprint": fingerprint,
                "status_code": None,
                "content_type": "",
                "body": b"",
                "created_at": timezone.now(),
            },
        )
        taken = True
    finally:
        if not taken:
            _unlock(claim)
    return None


def _finish(claim: Claim, response: HttpResponseBase) -> None:
    """Store the answer (or forget the claim of a 5xx or a stream), then let the key go."""
    rows = IdempotencyKey.objects.filter(api_key_id=claim.api_key_id, key=claim.key)
    try:
        if response.status_code >= 500 or response.streaming or not isinstance(response, HttpResponse):
            rows.delete()
        else:
            status, body = getattr(response, REPLAY, None) or (response.status_code, response.content)
            rows.update(status_code=status, content_type=response.get("Content-Type", ""), body=_seal(claim, body))
    except DatabaseError:  # the answer stands; a retry will run the request again
        log.warning("could not store the answer of idempotency key %r", claim.key, exc_info=True)
    finally:
        _unlock(claim)


class IdempotencyMiddleware:
    """Claims the key before the view (`process_view`, once the URL names the view and so its scope)
    and stores the answer after it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        try:
            response = self.get_response(request)
        except BaseException:
            if (claim := getattr(request, CLAIM, None)) is not None:
                _finish(claim, HttpResponse(status=500))
            raise
        if (claim := getattr(request, CLAIM, None)) is not None:
            _finish(claim, response)
        return response

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        key = request.headers.get(HEADER)
        if key is None or request.method != "POST" or not request.path.startswith("/api/"):
            return None
        if not 1 <= len(key) <= 255 or not (key.isascii() and key.isprintable()):
            return _error(INVALID_IDEMPOTENCY_KEY, f"{HEADER} must be 1 to 255 printable ASCII characters")
        secret = _secret(request)
        try:
            api_key = api_key_get_active(secret=secret) if secret else None
            needed = required_scope_of(view=getattr(view, "view_class", None), method="POST")
            if api_key is None or not api_key.has_scope(needed) or secret is None:
                return None  # the view answers 401 or 403
            claim = Claim(api_key_id=api_key.pk, key=key, lock=_lock_id(api_key.pk, key), cipher=_cipher(secret, key))
            answer = _claim(claim, _fingerprint(request))
        except DatabaseError as exc:
            return db_health.error_response(request, exc)
        if answer is None:
            setattr(request, CLAIM, claim)
        return answer
