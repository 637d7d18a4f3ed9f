"""`ContextArchitect`: the synchronous client (httpx)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, BinaryIO, TypeVar, Unpack

import httpx

from contextarch_client import calls, models
from contextarch_client.bulk import BulkPlan
from contextarch_client.config import Config
from contextarch_client.errors import ConnectionFailed, ContextArchError, error_for
from contextarch_client.params import AttemptParams, ContextParams, HistoryParams, ItemFields
from contextarch_client.retry import RetryPolicy, attempt_headers, retry_after_seconds, retryable
from contextarch_client.sse import SseParser

R = TypeVar("R")


class ContextArchitect:
    """The agent API of one workspace (the key's). Use as a context manager, or call `close()`.

    `base_url` and `api_key` default to CONTEXTARCH_URL and CONTEXTARCH_API_KEY.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = Config.resolve(base_url, api_key)
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(
            base_url=self.config.base_url, headers=self.config.headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> ContextArchitect:
        return self

    def __exit__(self, *exc: tuple[type[BaseException] | None, BaseException | None, TracebackType | None]) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- sending -----------------------------------------------------------------------------------

    def _send(self, call: calls.Call[R]) -> R:
        headers, may_repeat = attempt_headers(method=call.method, idempotent=call.idempotent)
        attempt = 0
        while True:
            attempt += 1
            retries_left = attempt <= self.retry.max_retries
            try:
                response = self._http.request(
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
                    time.sleep(self.retry.delay(attempt))
                    continue
                raise ConnectionFailed(str(exc) or type(exc).__name__, code="connection_failed") from exc
            if may_repeat and retries_left and retryable(response.status_code, _json_or_none(response)):
                time.sleep(self.retry.delay(attempt, retry_after_seconds(response.headers.get("Retry-After"))))
                continue
            return call.parse(_body_or_raise(response))

    # -- context -----------------------------------------------------------------------------------

    def get_context(self, **params: Unpack[ContextParams]) -> models.ContextResult:
        """Assemble context for a query within an exact token budget (`POST /api/v1/context/`)."""
        return self._send(calls.context(params))

    def stream_context(self, **params: Unpack[ContextParams]) -> Iterator[models.StreamEvent]:
        """The same context as Server-Sent Events: one `chunk` event per chunk, then `complete`.

        Errors (bad input, unknown layer) raise before the first event, like `get_context`.
        """
        query = calls.context_stream_query(params)
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._http.stream(
                    "GET", "/api/v1/context/stream", params=query, headers={"Accept": "text/event-stream"}
                ) as response:
                    if response.status_code >= 400:
                        response.read()
                        _body_or_raise(response)
                    parser = SseParser()
                    for line in response.iter_lines():
                        event = parser.feed(line)
                        if event is not None:
                            yield event
                    return
            except httpx.ConnectError as exc:  # refused before any event: try again
                if attempt > self.retry.max_retries:
                    raise ConnectionFailed(str(exc), code="connection_failed") from exc
                time.sleep(self.retry.delay(attempt))

    def get_trace(self, trace_id: str) -> models.Trace:
        """Why each candidate was included or left out (`GET /api/v1/traces/{trace_id}/`)."""
        return self._send(calls.trace(trace_id))

    def report_consumption(self, *, trace_id: str, used: Sequence[int]) -> models.ConsumptionRecorded:
        """Which injected packages of one assembly were used (the same report again is idempotent)."""
        return self._send(calls.consumption(trace_id=trace_id, used=used))

    def count_tokens(
        self,
        *,
        model: str | None = None,
        text: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> models.TokenCount:
        """Tokens of a `text`, or of chat `messages` and `tools`, in `model`'s tokenizer (`POST /api/v1/tokens/`):
        exact where the model's vocabulary is published, else a calibrated estimate with its `margin`."""
        return self._send(calls.tokens_count(model=model, text=text, messages=messages, tools=tools))

    # -- history, attempts and error patterns --------------------------------------------------------

    def search_history(self, **params: Unpack[HistoryParams]) -> models.HistoryResult:
        """Past messages by meaning (`query`), by `task` or by `ids`, oldest first (`GET /api/v1/history/`)."""
        return self._send(calls.history(params))

    def record_attempt(self, **params: Unpack[AttemptParams]) -> models.AttemptRecorded:
        """Report an attempt; a success after a failure captures an error pattern."""
        return self._send(calls.attempt(params))

    def match_error(
        self, *, error: str, min_confidence: float | None = None, limit: int | None = None
    ) -> models.ErrorPatternMatches:
        """Known fixes for an error, the exact signature first."""
        return self._send(calls.error_match(error=error, min_confidence=min_confidence, limit=limit))

    # -- layers and items ----------------------------------------------------------------------------

    def list_layers(
        self,
        *,
        kind: str | None = None,
        external_id: str | None = None,
        parent: int | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Layer]:
        return self._send(
            calls.layers_list(kind=kind, external_id=external_id, parent=parent, page=page, page_size=page_size)
        )

    def iter_layers(
        self,
        *,
        kind: str | None = None,
        external_id: str | None = None,
        parent: int | None = None,
        page_size: int = 100,
    ) -> Iterator[models.Layer]:
        """Every matching layer, page after page."""
        return self._pages(
            lambda page: self.list_layers(
                kind=kind, external_id=external_id, parent=parent, page=page, page_size=page_size
            )
        )

    def get_layer(self, layer_id: int) -> models.Layer:
        return self._send(calls.layer_get(layer_id))

    def create_layer(
        self, *, kind: str, name: str, parent: int | None = None, external_id: str | None = None
    ) -> models.Layer:
        return self._send(calls.layer_create(kind=kind, name=name, parent=parent, external_id=external_id))

    def list_items(
        self,
        *,
        layer: int | None = None,
        kind: str | None = None,
        type: str | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Item]:
        return self._send(calls.items_list(layer=layer, kind=kind, type=type, page=page, page_size=page_size))

    def iter_items(
        self, *, layer: int | None = None, kind: str | None = None, type: str | None = None, page_size: int = 100
    ) -> Iterator[models.Item]:
        """Every matching item, oldest first, page after page."""
        return self._pages(
            lambda page: self.list_items(layer=layer, kind=kind, type=type, page=page, page_size=page_size)
        )

    def get_item(self, item_id: int) -> models.Item:
        return self._send(calls.item_get(item_id))

    def create_item(self, *, layer: int, **fields: Unpack[ItemFields]) -> models.Item:
        return self._send(calls.item_create(layer=layer, fields=fields))

    def update_item(self, item_id: int, **fields: Unpack[ItemFields]) -> models.Item:
        """Change some fields of an item (`PATCH /api/v1/items/{item_id}/`); new content is embedded again."""
        return self._send(calls.item_update(item_id=item_id, fields=fields))

    def delete_item(self, item_id: int) -> None:
        self._send(calls.item_delete(item_id))

    def delete_layer(self, layer_id: int) -> None:
        """Delete a layer with its descendants and their items (the company root cannot be deleted)."""
        self._send(calls.layer_delete(layer_id))

    def create_items(self, *, layer: int, items: Sequence[Mapping[str, Any]]) -> models.BulkCreated:
        """Up to the server's bulk limit (1,000) in one all-or-nothing request; see `bulk_load` for more."""
        return self._send(calls.items_bulk(layer=layer, items=items))

    def bulk_load(
        self,
        *,
        layer: int,
        items: Iterable[Mapping[str, Any]],
        chunk_size: int = 500,
        progress: bool = True,
        wait: bool = True,
        timeout: float = 600.0,
    ) -> models.BulkLoadResult:
        """Create many items in chunks (each all or nothing), with a progress bar; `wait` until searchable.

        A chunk that fails raises, with `details["created_ids"]` holding the ids of the chunks before it.
        """
        plan = BulkPlan(items=list(items), chunk_size=chunk_size, progress=progress)
        for chunk in plan.chunks():
            try:
                plan.done(chunk, self.create_items(layer=layer, items=chunk).ids)
            except ContextArchError as exc:
                plan.fail(exc)
        searchable = False
        if wait:
            searchable = self.wait_until_searchable(timeout=timeout, progress=plan.bar).items_pending_embedding == 0
        return plan.finish(searchable=searchable)

    def status(self) -> models.Status:
        return self._send(calls.status())

    def wait_until_searchable(
        self, *, timeout: float = 600.0, interval: float = 0.5, progress: Any = None
    ) -> models.Status:
        """Poll `GET /api/v1/status/` until no item of the workspace waits for its embedding (or `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            current = self.status()
            if progress is not None:
                eta = current.embedding_eta_seconds
                progress.set_postfix_str(
                    f"{current.items_pending_embedding} waiting for embeddings"
                    + ("" if eta is None else f", about {eta:.0f} s left")
                )
            if current.items_pending_embedding == 0 or time.monotonic() >= deadline:
                return current
            time.sleep(interval)

    # -- workspace archive and erasure (admin keys) ----------------------------------------------------

    def workspace_export(self, dest: str | os.PathLike[str] | BinaryIO, *, embeddings: bool = False) -> int:
        """Write the key's workspace as an archive (a zip) to `dest`, a path or a binary file, as it streams in
        (`GET /api/v1/workspace/export/`); `embeddings` includes the items' vectors. Answers the bytes written.

        A path is only created once the server has answered with the archive; an error raises before.
        """
        query = calls.workspace_export_query(embeddings=embeddings)
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._http.stream("GET", "/api/v1/workspace/export/", params=query) as response:
                    if response.status_code >= 400:
                        response.read()
                        _body_or_raise(response)
                    with _archive_out(dest) as out:
                        written = 0
                        for chunk in response.iter_bytes():
                            out.write(chunk)
                            written += len(chunk)
                    return written
            except httpx.ConnectError as exc:  # refused before anything was written: try again
                if attempt > self.retry.max_retries:
                    raise ConnectionFailed(str(exc), code="connection_failed") from exc
                time.sleep(self.retry.delay(attempt))
            except httpx.TransportError as exc:
                raise ConnectionFailed(str(exc) or type(exc).__name__, code="connection_failed") from exc

    def workspace_import(self, source: str | os.PathLike[str] | bytes | BinaryIO) -> models.WorkspaceImported:
        """Restore an archive (a path, bytes or a binary file) into the key's workspace, which must be empty
        (`POST /api/v1/workspace/import/`): `Conflict` `workspace_not_empty`; a damaged or foreign archive is
        `InvalidRequest` (`archive_damaged`, `archive_format_unknown`, `archive_member_missing`, `archive_invalid`)."""
        return self._send(calls.workspace_import(calls.archive_bytes(source)))

    def erase(
        self,
        *,
        item_ids: Sequence[int] | None = None,
        external_id_prefix: str | None = None,
        user: str | None = None,
        text: str | None = None,
        dry_run: bool = False,
        dry_run_id: int | None = None,
    ) -> models.Erasure:
        """Erase what is named everywhere the service keeps it, and answer the receipt (`POST /api/v1/erasure/`).

        `dry_run=True` only counts, per place. A `text` is erased only after its dry run: send the same
        arguments again with `dry_run_id` set to the dry run's `id`.
        """
        return self._send(
            calls.erase(
                item_ids=item_ids,
                external_id_prefix=external_id_prefix,
                user=user,
                text=text,
                dry_run=dry_run,
                dry_run_id=dry_run_id,
            )
        )

    def erasures(self, *, page: int | None = None, page_size: int | None = None) -> models.Page[models.Erasure]:
        """The workspace's erasure receipts, newest first (`GET /api/v1/erasure/`)."""
        return self._send(calls.erasures_list(page=page, page_size=page_size))

    def erasure(self, erasure_id: int) -> models.Erasure:
        """One erasure's receipt (`GET /api/v1/erasure/{erasure_id}/`)."""
        return self._send(calls.erasure_get(erasure_id))

    # -- supersessions ---------------------------------------------------------------------------------

    def list_supersessions(
        self,
        *,
        state: str | None = None,
        layer: int | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> models.Page[models.Supersession]:
        """Proposals that a newer item supersedes an older one, newest first (`GET /api/v1/supersessions/`)."""
        return self._send(calls.supersessions_list(state=state, layer=layer, page=page, page_size=page_size))

    def iter_supersessions(
        self, *, state: str | None = None, layer: int | None = None, page_size: int = 100
    ) -> Iterator[models.Supersession]:
        """Every matching proposal, page after page."""
        return self._pages(
            lambda page: self.list_supersessions(state=state, layer=layer, page=page, page_size=page_size)
        )

    def accept_supersession(self, proposal_id: int) -> models.Supersession:
        """Accept a pending proposal: the older item is superseded by the newer one (`POST .../accept/`);
        a decided one raises `Conflict` `proposal_decided`."""
        return self._send(calls.supersession_decide(proposal_id, accept=True))

    def reject_supersession(self, proposal_id: int) -> models.Supersession:
        """Reject a pending proposal: both items stay (decided: `Conflict` `proposal_decided`)."""
        return self._send(calls.supersession_decide(proposal_id, accept=False))

    def _pages(self, fetch: Any) -> Iterator[Any]:
        page = 1
        while True:
            answer = fetch(page)
            yield from answer.results
            if not answer.next:
                return
            page += 1


@contextlib.contextmanager
def _archive_out(dest: str | os.PathLike[str] | BinaryIO) -> Iterator[BinaryIO]:
    """A binary file to write an archive to: `dest` itself, or the file at the path (closed afterwards)."""
    if isinstance(dest, (str, os.PathLike)):
        with open(dest, "wb") as out:
            yield out
    else:
        yield dest


def _json_or_none(response: httpx.Response) -> Any:
    """The JSON body of a 409 (to tell "in progress" from a real conflict); None for other statuses."""
    if response.status_code != 409:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _body_or_raise(response: httpx.Response) -> Any:
    """The decoded JSON body of a success; the error's exception otherwise."""
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    if response.status_code >= 400:
        raise error_for(response.status_code, body, retry_after_seconds(response.headers.get("Retry-After")))
    return body
