"""`AsyncContextArchitect`: the asynchronous client (httpx.AsyncClient), the same calls as `ContextArchitect`."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, BinaryIO, TypeVar, Unpack

import httpx

from contextarch_client import calls, models
from contextarch_client.bulk import BulkPlan
from contextarch_client.client import _archive_out, _body_or_raise, _json_or_none
from contextarch_client.config import Config
from contextarch_client.errors import ConnectionFailed, ContextArchError
from contextarch_client.params import AttemptParams, ContextParams, HistoryParams, ItemFields
from contextarch_client.retry import RetryPolicy, attempt_headers, retry_after_seconds, retryable
from contextarch_client.sse import SseParser

R = TypeVar("R")
M = TypeVar("M", bound=models.Model)


class AsyncContextArchitect:
    """The agent API of one workspace, for asyncio. Use `async with`, or `await close()`."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.config = Config.resolve(base_url, api_key)
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(
            base_url=self.config.base_url, headers=self.config.headers, timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncContextArchitect:
        return self

    async def __aexit__(
        self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _send(self, call: calls.Call[R]) -> R:
        headers, may_repeat = attempt_headers(method=call.method, idempotent=call.idempotent)
        attempt = 0
        while True:
            attempt += 1
            retries_left = attempt <= self.retry.max_retries
            try:
                response = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.body,
                    content=call.content,
                    headers={**call.headers, **headers},
                )
            except httpx.TransportError as exc:
                refused = isinstance(exc, httpx.ConnectError)  # nothing was sent: any call may go again
                if retries_left and (refused or may_repeat):
                    await asyncio.sleep(self.retry.delay(attempt))
                    continue
                raise ConnectionFailed(str(exc) or type(exc).__name__, code="connection_failed") from exc
            if may_repeat and retries_left and retryable(response.status_code, _json_or_none(response)):
                await asyncio.sleep(self.retry.delay(attempt, retry_after_seconds(response.headers.get("Retry-After"))))
                continue
            return call.parse(_body_or_raise(response))

    async def get_context(self, **params: Unpack[ContextParams]) -> models.ContextResult:
        return await self._send(calls.context(params))

    async def stream_context(self, **params: Unpack[ContextParams]) -> AsyncIterator[models.StreamEvent]:
        query = calls.context_stream_query(params)
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self._http.stream(
                    "GET", "/api/v1/context/stream", params=query, headers={"Accept": "text/event-stream"}
                ) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        _body_or_raise(response)
                    parser = SseParser()
                    async for line in response.aiter_lines():
                        event = parser.feed(line)
                        if event is not None:
                            yield event
                    return
            except httpx.ConnectError as exc:
                if attempt > self.retry.max_retries:
                    raise ConnectionFailed(str(exc), code="connection_failed") from exc
                await asyncio.sleep(self.retry.delay(attempt))

    async def get_trace(self, trace_id: str) -> models.Trace:
        return await self._send(calls.trace(trace_id))

    async def report_consumption(self, *, trace_id: str, used: Sequence[int]) -> models.ConsumptionRecorded:
        return await self._send(calls.consumption(trace_id=trace_id, used=used))

    async def count_tokens(
        self,
        *,
        model: str | None = None,
        text: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> models.TokenCount:
        return await self._send(calls.tokens_count(model=model, text=text, messages=messages, tools=tools))

    async def search_history(self, **params: Unpack[HistoryParams]) -> models.HistoryResult:
        return await self._send(calls.history(params))

    async def record_attempt(self, **params: Unpack[AttemptParams]) -> models.AttemptRecorded:
        return await self._send(calls.attempt(params))

    async def match_error(
        self, *, error: str, min_confidence: float | None = None, limit: int | None = None
    ) -> models.ErrorPatternMatches:
        return await self._send(calls.error_match(error=error, min_confidence=min_confidence, limit=limit))

    async def list_layers(
        self,
        *,
        kind: str | None = None,
        external_id: str | None = None,
        parent: int | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Layer]:
        return await self._send(
            calls.layers_list(kind=kind, external_id=external_id, parent=parent, page=page, page_size=page_size)
        )

    def iter_layers(
        self,
        *,
        kind: str | None = None,
        external_id: str | None = None,
        parent: int | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[models.Layer]:
        return _pages(
            lambda page: self.list_layers(
                kind=kind, external_id=external_id, parent=parent, page=page, page_size=page_size
            )
        )

    async def get_layer(self, layer_id: int) -> models.Layer:
        return await self._send(calls.layer_get(layer_id))

    async def create_layer(
        self, *, kind: str, name: str, parent: int | None = None, external_id: str | None = None
    ) -> models.Layer:
        return await self._send(calls.layer_create(kind=kind, name=name, parent=parent, external_id=external_id))

    async def list_items(
        self,
        *,
        layer: int | None = None,
        kind: str | None = None,
        type: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Item]:
        return await self._send(calls.items_list(layer=layer, kind=kind, type=type, page=page, page_size=page_size))

    def iter_items(
        self, *, layer: int | None = None, kind: str | None = None, type: str | None = None, page_size: int = 100
    ) -> AsyncIterator[models.Item]:
        return _pages(lambda page: self.list_items(layer=layer, kind=kind, type=type, page=page, page_size=page_size))

    async def get_item(self, item_id: int) -> models.Item:
        return await self._send(calls.item_get(item_id))

    async def create_item(self, *, layer: int, **fields: Unpack[ItemFields]) -> models.Item:
        return await self._send(calls.item_create(layer=layer, fields=fields))

    async def update_item(self, item_id: int, **fields: Unpack[ItemFields]) -> models.Item:
        """Change some fields of an item (`PATCH /api/v1/items/{item_id}/`); new content is embedded again."""
        return await self._send(calls.item_update(item_id=item_id, fields=fields))

    async def delete_item(self, item_id: int) -> None:
        await self._send(calls.item_delete(item_id))

    async def delete_layer(self, layer_id: int) -> None:
        """Delete a layer with its descendants and their items (the company root cannot be deleted)."""
        await self._send(calls.layer_delete(layer_id))

    async def create_items(self, *, layer: int, items: Sequence[Mapping[str, Any]]) -> models.BulkCreated:
        return await self._send(calls.items_bulk(layer=layer, items=items))

    async def bulk_load(
        self,
        *,
        layer: int,
        items: Iterable[Mapping[str, Any]],
        chunk_size: int = 500,
        progress: bool = True,
        wait: bool = True,
        timeout: float = 600.0,
    ) -> models.BulkLoadResult:
        plan = BulkPlan(items=list(items), chunk_size=chunk_size, progress=progress)
        for chunk in plan.chunks():
            try:
                plan.done(chunk, (await self.create_items(layer=layer, items=chunk)).ids)
            except ContextArchError as exc:
                plan.fail(exc)
        searchable = False
        if wait:
            status = await self.wait_until_searchable(timeout=timeout, progress=plan.bar)
            searchable = status.items_pending_embedding == 0
        return plan.finish(searchable=searchable)

    async def workspace_export(self, dest: str | os.PathLike[str] | BinaryIO, *, embeddings: bool = False) -> int:
        """Write the key's workspace archive to `dest` (a path or a binary file); the bytes written."""
        query = calls.workspace_export_query(embeddings=embeddings)
        try:
            async with self._http.stream("GET", "/api/v1/workspace/export/", params=query) as response:
                if response.status_code >= 400:
                    await response.aread()
                    _body_or_raise(response)
                with _archive_out(dest) as out:
                    written = 0
                    async for chunk in response.aiter_bytes():
                        out.write(chunk)
                        written += len(chunk)
                return written
        except httpx.TransportError as exc:
            raise ConnectionFailed(str(exc) or type(exc).__name__, code="connection_failed") from exc

    async def workspace_import(self, source: str | os.PathLike[str] | bytes | BinaryIO) -> models.WorkspaceImported:
        """Restore an archive into the key's (empty) workspace; see `ContextArchitect.workspace_import`."""
        return await self._send(calls.workspace_import(calls.archive_bytes(source)))

    async def erase(
        self,
        *,
        item_ids: Sequence[int] | None = None,
        external_id_prefix: str | None = None,
        user: str | None = None,
        text: str | None = None,
        dry_run: bool = False,
        dry_run_id: int | None = None,
    ) -> models.Erasure:
        """Erase (or `dry_run`) what is named; see `ContextArchitect.erase`."""
        return await self._send(
            calls.erase(
                item_ids=item_ids,
                external_id_prefix=external_id_prefix,
                user=user,
                text=text,
                dry_run=dry_run,
                dry_run_id=dry_run_id,
            )
        )

    async def erasures(self, *, page: int | None = None, page_size: int | None = None) -> models.Page[models.Erasure]:
        return await self._send(calls.erasures_list(page=page, page_size=page_size))

    async def erasure(self, erasure_id: int) -> models.Erasure:
        return await self._send(calls.erasure_get(erasure_id))

    async def list_supersessions(
        self,
        *,
        state: str | None = None,
        layer: int | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Supersession]:
        return await self._send(calls.supersessions_list(state=state, layer=layer, page=page, page_size=page_size))

    def iter_supersessions(
        self, *, state: str | None = None, layer: int | None = None, page_size: int = 100
    ) -> AsyncIterator[models.Supersession]:
        return _pages(lambda page: self.list_supersessions(state=state, layer=layer, page=page, page_size=page_size))

    async def accept_supersession(self, proposal_id: int) -> models.Supersession:
        return await self._send(calls.supersession_decide(proposal_id, accept=True))

    async def reject_supersession(self, proposal_id: int) -> models.Supersession:
        return await self._send(calls.supersession_decide(proposal_id, accept=False))

    async def status(self) -> models.Status:
        return await self._send(calls.status())

    async def wait_until_searchable(
        self, *, timeout: float = 600.0, interval: float = 0.5, progress: Any = None
    ) -> models.Status:
        deadline = time.monotonic() + timeout
        while True:
            current = await self.status()
            if progress is not None:
                eta = current.embedding_eta_seconds
                progress.set_postfix_str(
                    f"{current.items_pending_embedding} waiting for embeddings"
                    + ("" if eta is None else f", about {eta:.0f} s left")
                )
            if current.items_pending_embedding == 0 or time.monotonic() >= deadline:
                return current
            await asyncio.sleep(interval)


async def _pages(fetch: Callable[[int], Awaitable[models.Page[M]]]) -> AsyncIterator[M]:
    page = 1
    while True:
        answer = await fetch(page)
        for row in answer.results:
            yield row
        if not answer.next:
            return
        page += 1
