"""Losing PostgreSQL fails requests fast with a 503 `database_unavailable` and `Retry-After`.

A request that meets a lost connection (an error of class 08, an admin or crash shutdown, the
pool's timeout) marks the database down in this process. While it is down, requests are answered
503 at once, and at most every PROBE_SECONDS one of them tries a fresh connection (1 s connect
timeout) instead; when that works the pool drops its dead idle connections and requests flow again.
A statement or lock timeout is a 503 `database_timeout` but says nothing about the server's health.

Waiting out the pool's timeout is not an outage in itself: with every pooled connection busy (a
burst, issue 26) the server is fine. So the pool's timeout asks the server (a fresh connection,
at most one probe per PROBE_SECONDS whose answer the others share): if it answers, even with "too
many clients", the request is a 503 `overloaded` with `Retry-After`, logged as overload and not
marking the database down; only if it does not is it `database_unavailable`. Nor is it an overload
while the pool is failing to connect (its connection-error count rose within RECOVERY_SECONDS) or
just after an outage (the database was marked down within RECOVERY_SECONDS): the pool is still
replacing the connections the outage broke, and a restarted server answering the probe says nothing
about its connections being busy.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

from apps.core import errors
from apps.core.exceptions import error_body
from apps.metrics.registry import OVERLOADED

log = logging.getLogger(__name__)

PROBE_SECONDS = 0.5
RETRY_AFTER_SECONDS = 2
OVERLOADED_RETRY = 1  # seconds
CONNECT_TIMEOUT_SECONDS = 1
# SQLSTATEs of a lost server: connection exceptions (08), admin/crash shutdown, cannot connect now.
LOST = ("08", "57P01", "57P02", "57P03")
TIMED_OUT = ("57014", "55P03")  # query_canceled (statement_timeout), lock_not_available (lock_timeout)
BUSY = ("53",)  # insufficient resources (too many connections, ...): the server answers, it is full
RECOVERY_SECONDS = 10.0  # a pool timeout this soon after an outage or a failed connect is the outage's
OVERLOAD_LOG_SECONDS = 5.0  # at most one "overloaded" line per process this often
EXEMPT_PATHS = ("/healthz", "/readyz", "/static/", "/metrics")

_lock = threading.Lock()
_down = False
_next_probe = 0.0
_probe_lock = threading.Lock()
_answered_until = 0.0  # monotonic: the server answered a probe; trusted until then
_next_overload_log = 0.0
_last_outage = -RECOVERY_SECONDS  # monotonic: when the database was last marked down or the pool failed to connect
_pool_errors_seen = 0


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify(exc: BaseException) -> str | None:
    """ "unavailable", "timeout", "overloaded" (no pooled connection free, the server answering) or
    None (not a database outage) for an exception and its causes."""
    import psycopg
    from psycopg_pool import PoolTimeout

    for error in _causes(exc):
        if isinstance(error, PoolTimeout):
            return "overloaded" if not _recovering() and server_answers() else "unavailable"
        if isinstance(error, psycopg.Error):
            state = error.sqlstate or ""
            if state.startswith(TIMED_OUT):
                return "timeout"
            if not state or state.startswith(LOST):  # no SQLSTATE: the connection itself failed
                return "unavailable" if isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError)) else None
    return None


def _recovering() -> bool:
    """Whether the database was marked down, or the pool failed to open a connection, within the last
    RECOVERY_SECONDS."""
    global _last_outage, _pool_errors_seen
    pool = getattr(connection, "pool", None)
    errors = int(pool.get_stats().get("connections_errors", 0)) if pool is not None else 0
    with _lock:
        if errors > _pool_errors_seen:
            _pool_errors_seen, _last_outage = errors, time.monotonic()
        return time.monotonic() - _last_outage < RECOVERY_SECONDS


def mark_down() -> None:
    global _down, _next_probe, _last_outage
    with _lock:
        if not _down:
            log.error("PostgreSQL is unavailable; answering 503 until a probe connects")
        _down, _next_probe = True, time.monotonic() + PROBE_SECONDS
        _last_outage = time.monotonic()


def database_down() -> bool:
    return _down


def probe(*, raise_errors: bool = False) -> bool:
    """Whether a fresh connection to the database answers `SELECT 1` (≤ 1 s to connect); with
    `raise_errors`, a failure raises its psycopg error instead of answering False."""
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
        if raise_errors:
            raise
        return False


def _connects() -> bool:
    """A fresh connection answers `SELECT 1`, or the server refuses it for want of room (it is up)."""
    import psycopg

    try:
        return probe(raise_errors=True)
    except psycopg.Error as error:
        return (error.sqlstate or "").startswith(BUSY)


def server_answers() -> bool:
    """Whether PostgreSQL answers: a probe within the last PROBE_SECONDS said so, or one now does.

    One probe at a time per process; the requests that meet the pool's timeout meanwhile share its answer.
    """
    global _answered_until
    if time.monotonic() < _answered_until:
        return True
    with _probe_lock:
        if time.monotonic() < _answered_until:
            return True
        if not _connects():
            return False
        _answered_until = time.monotonic() + PROBE_SECONDS
        return True


def note_overloaded(what: str) -> None:
    """Log an overload (a request refused for want of a connection or of its workspace's share),
    at most once per OVERLOAD_LOG_SECONDS per process."""
    global _next_overload_log
    now = time.monotonic()
    with _lock:
        if now < _next_overload_log:
            return
        _next_overload_log = now + OVERLOAD_LOG_SECONDS
    log.warning("overloaded: %s; answered `overloaded` with Retry-After", what)


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
        return errors.DATABASE_TIMEOUT.code, errors.DATABASE_TIMEOUT.message, 1
    if kind == "overloaded":
        return (
            errors.OVERLOADED.code,
            "The service is busy (no database connection free); retry shortly.",
            OVERLOADED_RETRY,
        )
    return errors.DATABASE_UNAVAILABLE.code, errors.DATABASE_UNAVAILABLE.message, RETRY_AFTER_SECONDS


def unavailable_response(request: HttpRequest, kind: str = "unavailable") -> HttpResponse:
    code, message, retry = outage_answer(kind)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(error_body(code, message), status=503)
    else:
        response = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry)
    return response


def error_response(request: HttpRequest, exc: BaseException) -> HttpResponse:
    """A database error met outside a DRF view (in a middleware), answered as the API's exception
    handler answers it: the 503 of an outage (marking the database down) or a timeout; any other
    error is raised again."""
    kind = classify(exc)
    if kind is None:
        raise exc
    note_outage(kind, exc)
    return unavailable_response(request, kind)


def note_outage(kind: str, exc: BaseException | None) -> None:
    """What a request that met `kind` tells the process: a lost database is marked down (and
    probed), an overload is logged as such; a timeout is the caller's to log."""
    if kind == "unavailable":
        mark_down()
    elif kind == "overloaded":
        OVERLOADED.labels(reason="database_pool").inc()
        note_overloaded(f"no pooled database connection free in time, PostgreSQL answers ({exc})")


class DatabaseAvailabilityMiddleware:
    """While the database is marked down, answer 503 at once (one probe per PROBE_SECONDS)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _down and not request.path.startswith(EXEMPT_PATHS) and not _recovered():
            return unavailable_response(request)
        return self.get_response(request)
