"""Django's ASGI handler with the middleware chain and the view in one thread hop per request.

Every middleware of this service is synchronous, and so are the views. Django's `ASGIHandler`
loads the chain in async mode, so a request crossed between the event loop and a thread five
times: `request_started`'s receivers, the sync chain (sync_to_async), the async
`_get_response_async` under the last sync middleware (async_to_sync), the sync view
(sync_to_async again), and `response.close()`. Under vector load that was ~30% of the workers'
GIL time. Here the chain is loaded in sync mode, as WSGI does, and one `sync_to_async` call
(thread-sensitive: the request's own thread, as before) sends `request_started`, builds the
request, runs the chain and the view, and closes a non-streaming response (its body is already in
memory; `request_finished` gives the database connection back to the pool on the thread that
used it). What stays as Django does it: the body is read and the response sent on the event loop,
a client that disconnects while the view runs is noticed and the view's task cancelled (and the
request's client-gone Event set, apps/core/client_gone.py, for a sync view to stop on), and a
streaming response (SSE, the preview's stream) is consumed asynchronously and closed after its
last chunk.

The request's thread comes from a pool (`RequestThreads`) instead of a new one per request:
Django's `ThreadSensitiveContext()` started a thread for the request and another to join it.
The pooled thread runs one request at a time: it goes back to the pool only when every call the
request sent it has ended (a cancelled view runs on to its end, as before, and no other request
queues behind it).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.http import FileResponse, HttpResponseBase
from django.urls import set_script_prefix

from apps.core.client_gone import SCOPE_KEY

log = logging.getLogger("apps.core.client_gone")
Scope = dict[str, Any]


class RequestThread(ThreadPoolExecutor):
    """One thread for one request at a time; back to its pool once the request let it go and
    every call sent to it has ended."""

    def __init__(self, back: Callable[[RequestThread], None]) -> None:
        super().__init__(max_workers=1, thread_name_prefix="request")
        self._back = back
        self._lock = threading.Lock()
        self._running = 0
        self._released = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._lock:
            self._running += 1
        future = super().submit(fn, *args, **kwargs)
        future.add_done_callback(self._ended)
        return future

    def _ended(self, _: Future[Any]) -> None:
        with self._lock:
            self._running -= 1
            back = self._released and not self._running
            if back:
                self._released = False
        if back:
            self._back(self)

    def release(self) -> None:
        """The request is done with this thread: free now, or when its last call ends."""
        with self._lock:
            if self._running:
                self._released = True
                return
        self._back(self)


class RequestThreads:
    """Reusable request threads: as many as requests run at once, and at most `max_idle` kept
    waiting (after a burst, the threads past that end)."""

    def __init__(self, max_idle: int = 32) -> None:
        self._free: list[RequestThread] = []
        self._max_idle = max_idle

    def take(self) -> RequestThread:
        try:
            return self._free.pop()
        except IndexError:
            return RequestThread(self._put)

    def _put(self, thread: RequestThread) -> None:
        if len(self._free) < self._max_idle:
            self._free.append(thread)
        else:
            thread.shutdown(wait=False)


class OneHopASGIHandler(ASGIHandler):
    """ASGIHandler whose sync middleware chain and sync view run in a single thread hop."""

    def __init__(self) -> None:
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self._threads = RequestThreads()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        thread = self._threads.take()
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        finally:
            thread.release()

    def _respond(self, scope: Scope, body_file: Any) -> tuple[HttpResponseBase, bool]:
        """In the request's thread: the response, and whether it is closed already (not streaming)."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None
            response: HttpResponseBase = error_response
        else:
            response = self.get_response(request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size
        response._handler_class = self.__class__  # type: ignore[attr-defined]
        if response.streaming:
            return response, False
        response.close()
        return response, True

    async def handle(self, scope: Scope, receive: Any, send: Any) -> None:
        """As ASGIHandler.handle, with `_respond` as the one hop and the client-gone Event of
        apps/core/client_gone.py in the request's scope (see the module's docstring)."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        gone = threading.Event()
        scope = {**scope, SCOPE_KEY: gone}
        answered = False  # the view is done: a disconnect now cancels nothing

        async def process_request() -> tuple[HttpResponseBase, bool]:
            nonlocal answered
            response, closed = await sync_to_async(self._respond, thread_sensitive=True)(scope, body_file)
            answered = closed
            try:
                await self.send_response(response, send)
            except asyncio.CancelledError:
                pass  # the client disconnected during send_response
            return response, closed

        async def listen_for_disconnect() -> None:
            message = await receive()
            if message["type"] != "http.disconnect":
                raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")
            if not answered:
                gone.set()
                log.info("client went away before the response: %s", scope.get("path", ""))
            raise RequestAborted()

        # Listening for a disconnect goes first: it should not fail in a way that keeps the
        # response's task from being cancelled.
        listening = asyncio.create_task(listen_for_disconnect())
        responding = asyncio.create_task(process_request())
        tasks: list[asyncio.Task[Any]] = [listening, responding]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                try:
                    await task
                except asyncio.CancelledError:
                    pass
        try:
            response, closed = responding.result()
        except asyncio.CancelledError:  # the view's thread runs on and closes its response itself
            await signals.request_finished.asend(sender=self.__class__)
        else:
            if not closed:
                await sync_to_async(response.close)()
        body_file.close()


def get_asgi_application() -> OneHopASGIHandler:
    """As django.core.asgi.get_asgi_application, with the one-hop handler."""
    import django

    django.setup(set_prefix=False)
    return OneHopASGIHandler()
