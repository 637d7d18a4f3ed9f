"""`/healthz` (liveness: the process answers) and `/readyz` (readiness: can it serve, and how well).

Readiness is 503 without the database, or with a configuration that cannot work (a check of
`READINESS_CHECKS` that says `fatal`: "misconfigured", e.g. EMBEDDING_DIMENSIONS against the stored
vectors). With Redis, the broker or the embedding provider down the service still answers (cache
misses, in-process background work, keyword search), so those checks are reported and turn the
status to "degraded". Every check is bounded (~1 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from apps.core import db_health, errors


@dataclass(frozen=True)
class Readiness:
    """One check's answer: `fatal` when the service cannot work as configured (503)."""

    ok: bool
    error: str = ""
    fatal: bool = False


# Checks that higher apps add in their AppConfig.ready (layers: the embedding space), by name.
READINESS_CHECKS: dict[str, Callable[[], Readiness]] = {}

EMBEDDER_CHECK_SECONDS = 30.0  # a remote provider is asked at most this often
_embedder_seen: dict[str, Any] = {"at": 0.0, "ok": True, "error": ""}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "alive"})


def _check(ok: bool, error: str = "") -> dict[str, Any]:
    return {"ok": ok, **({"error": error} if error else {})}


def _redis(url: str) -> dict[str, Any]:
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).ping()
        return _check(True)
    except Exception as exc:  # noqa: BLE001 - any failure is "not ready", with its reason
        return _check(False, type(exc).__name__)


def _embedder() -> dict[str, Any]:
    if settings.EMBEDDING_PROVIDER == "local":
        return _check(True)  # in process: there is nothing to reach
    if time.monotonic() - _embedder_seen["at"] > EMBEDDER_CHECK_SECONDS:
        from apps.core import embeddings

        try:
            vectors = embeddings.get_provider().embed_queries(["readiness probe"], timeout=1.0)
            if vectors.ndim != 2 or vectors.shape[1] != settings.EMBEDDING_DIMENSIONS:
                raise embeddings.EmbeddingError(
                    f"the provider makes {vectors.shape[-1]}-dimension vectors but EMBEDDING_DIMENSIONS is "
                    f"{settings.EMBEDDING_DIMENSIONS}: set EMBEDDING_DIMENSIONS (and the column: manage.py "
                    "embedding_dimensions) to the model's size, or choose a model of that size",
                    code=errors.EMBEDDING_DIMENSION_MISMATCH,
                )
            _embedder_seen.update(ok=True, error="")
        except embeddings.EmbeddingError as exc:
            mismatch = exc.code == errors.EMBEDDING_DIMENSION_MISMATCH.code
            _embedder_seen.update(ok=False, error=exc.message if mismatch else type(exc).__name__)
        except Exception as exc:  # noqa: BLE001
            _embedder_seen.update(ok=False, error=type(exc).__name__)
        _embedder_seen["at"] = time.monotonic()
    return _check(_embedder_seen["ok"], _embedder_seen["error"])


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check(db_health.probe())}
    if settings.REDIS_URL:
        checks["redis"] = _redis(settings.REDIS_URL)
    if settings.BACKGROUND_MODE == "celery" and settings.CELERY_BROKER_URL:
        checks["broker"] = _redis(settings.CELERY_BROKER_URL)
    checks["embedder"] = _embedder()
    fatal = False
    if checks["database"]["ok"]:
        for name, check in READINESS_CHECKS.items():
            answer = check()
            checks[name] = _check(answer.ok, answer.error)
            fatal = fatal or answer.fatal
    if not checks["database"]["ok"]:
        db_health.mark_down()
        status = "unavailable"
    elif fatal:
        status = "misconfigured"
    else:
        status = "ready" if all(check["ok"] for check in checks.values()) else "degraded"
    serving = status in ("ready", "degraded")
    response = JsonResponse({"status": status, "checks": checks}, status=200 if serving else 503)
    if status == "unavailable":
        response["Retry-After"] = str(db_health.RETRY_AFTER_SECONDS)
    return response
