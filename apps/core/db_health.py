"""Losing PostgreSQL fails requests fast with a 503 `database_unavailable` and `Retry-After`.

A request that meets a lost connection (an error of class 08, an admin or crash shutdown, the
pool's timeout) marks the database down in this process. While it is down, requests are answered
503 at once, and at most every PROBE_SECONDS one of them tries a fresh connection (1 s connect
timeout) instead; when that works the pool drops its dead idle connections and requests flow again.
A statement or lock timeout is a 503 `database_timeout` but says nothing about the server's health.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.core.exceptions import error_body

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.5
RETRY_AFTER_SECONDS = 2
CONNECT_TIMEOUT_SECONDS = 1
# SQLSTATEs of a lost server: connection exceptions (08), admin/crash shutdown, cannot connect now.
LOST = ("08", "57P01", "57P02", "57P03")
TIMED_OUT = ("57014", "55P03")  # query_canceled (statement_timeout), lock_not_available (lock_timeout)
EXEMPT_PATHS = ("/healthz", "/readyz", "/static/", "/metrics")

_lock = threading.Lock()
_down = False
_next_probe = 0.0


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify(exc: BaseException) -> str | None:
    """ "unavailable", "timeout" or None (not a database outage) for an exception and its causes."""
    import psycopg
    from psycopg_pool import PoolTimeout

    for error in _causes(exc):
        if isinstance(error, PoolTimeout):
            return "unavailable"
        if isinstance(error, psycopg.Error):
            state = error.sqlstate or ""
            if state.startswith(TIMED_OUT):
                return "timeout"
            if not state or state.startswith(LOST):  # no SQLSTATE: the connection itself failed
                return "unavailable" if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)) else None
    return None


def mark_down() -> None:
    global _down, _next_probe
    with _lock:
        if not _down:
            log.error("PostgreSQL is unavailable; answering 503 until a probe connects")
        _down, _next_probe = True, time.monotonic() + PROBE_SECONDS


def database_down() -> bool:
    return _down


def probe() -> bool:
    """Whether a fresh connection to the database answers `SELECT 1` (≤ 1 s to connect)."""
    import psycopg

    params = connection.get_connection_params()
    for key in ("cursor_factory", "context", "prepare_threshold", "pool"):
        params.pop(key, None)
    params["connect_timeout"] = CONNECT_TIMEOUT_SECONDS
    try:
        with psycopg.connect(**params, autocommit=True) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def _recovered() -> bool:
    """While down: probe when due; on success reset the pool's dead connections and mark up."""
    global _down, _next_probe
    with _lock:
        if time.monotonic() < _next_probe:
            return False
        _next_probe = time.monotonic() + PROBE_SECONDS
    if not probe():
        return False
    pool = getattr(connection, "pool", None)
    if pool is not None:
        pool.check()  # idle connections to the old server are closed and replaced
    with _lock:
        _down = False
    log.warning("PostgreSQL answers again")
    return True


def outage_answer(kind: str) -> tuple[str, str, int]:
    """The error code, message and Retry-After seconds of an outage kind."""
    if kind == "timeout":
        return "database_timeout", "The database did not answer in time; retry.", 1
    return "database_unavailable", "The database is unavailable; retry shortly.", RETRY_AFTER_SECONDS


def unavailable_response(request: HttpRequest, kind: str = "unavailable") -> HttpResponse:
    code, message, retry = outage_answer(kind)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(error_body(code, message), status=503)
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry)
    return response


class DatabaseAvailabilityMiddleware:
    """While the database is marked down, answer 503 at once (one probe per PROBE_SECONDS)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _down and not request.path.startswith(EXEMPT_PATHS) and not _recovered():
            return unavailable_response(request)
        return self.get_response(request)
