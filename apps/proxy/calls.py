"""One proxied call around its upstream: store the new turns and inject the context before, store the
reply and the usage after.

Never blocks the agent: whatever fails here (a session that cannot be made, an
assembly that fails) leaves the request as the client sent it, and the failure is named in the
answer's `Warning` header. Only the upstream's own answer decides the status the client gets.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.core.errors import DomainError
from apps.layers.models import Layer
from apps.profiles.models import ContextPosition
from apps.profiles.selectors import profile_get
from apps.proxy.compact import LADDER
from apps.proxy.conversation import Stored, session_external_id, session_for_call, turns_store
from apps.proxy.models import ProxyCall
from apps.proxy.turns import Turn
from apps.proxy.wire import Reply, Wire, latest_user_text
from apps.tokens.services import TokenCount, token_observation_record, tokens_count
from apps.workspaces.models import ApiKey, Workspace

log = logging.getLogger(__name__)

# The injected system message's own wrapping, kept free beside the context's counted tokens.
INJECTION_OVERHEAD = 16


@dataclass(frozen=True)
class Options:
    """The per-call options a client sends as headers."""

    session: str = ""
    parent: str = ""
    profile: str = ""
    budget: int | None = None
    off: bool = False


@dataclass
class Prepared:
    """The request as it goes upstream, and what the call's end needs to store."""

    body: dict[str, Any]
    model: str
    session: Layer | None = None
    stored: Stored | None = None
    trace_id: str = ""
    context_tokens: int = 0
    sent_count: TokenCount | None = None
    warnings: list[str] = field(default_factory=list)
    prepare_ms: float = 0.0


def _fail(prepared: Prepared, what: str, exc: Exception) -> None:
    message = exc.message if isinstance(exc, DomainError) else type(exc).__name__
    if not isinstance(exc, DomainError):
        log.exception("proxy: %s failed", what)
    prepared.warnings.append(f"{what} failed ({message}); the request went upstream without context")


def call_prepare(
    *,
    workspace: Workspace,
    api_key: ApiKey | None,
    wire: Wire,
    body: dict[str, Any],
    options: Options,
    started: float | None = None,
) -> Prepared:
    """Store the call's new turns and inject the context for its latest user message."""
    started = time.perf_counter() if started is None else started
    model = str(body.get("model") or "")
    prepared = Prepared(body=body, model=model)
    turns = wire.turns(body)
    try:
        external_id = session_external_id(header=options.session, user=wire.user(body), turns=turns)
        prepared.session = session_for_call(workspace=workspace, external_id=external_id, parent=options.parent)
        prepared.stored = turns_store(session=prepared.session, turns=turns)
    except Exception as exc:  # noqa: BLE001  (never blocks the agent)
        _fail(prepared, "storing the turns", exc)
        return _done(prepared, started)
    if options.off:
        _count_sent(prepared, workspace, wire)
        return _done(prepared, started)
    query = latest_user_text(turns)
    if not query.strip():
        prepared.warnings.append("no user message to assemble context for; the request went upstream unchanged")
        _count_sent(prepared, workspace, wire)
        return _done(prepared, started)
    try:
        _inject(prepared, workspace, api_key, wire, body, options, turns, query, started)
    except Exception as exc:  # noqa: BLE001  (never blocks the agent)
        prepared.body = body
        _fail(prepared, "assembling the context", exc)
    _count_sent(prepared, workspace, wire)
    return _done(prepared, started)


def _count_sent(prepared: Prepared, workspace: Workspace, wire: Wire) -> None:
    """Our count of the prompt as it goes upstream, to set beside the usage the upstream reports."""
    if prepared.sent_count is not None or not prepared.model:
        return
    try:
        messages, tools = wire.counted(prepared.body)
        prepared.sent_count = tokens_count(workspace=workspace, model=prepared.model, messages=messages, tools=tools)
    except DomainError:  # too large to count: the call goes on uncounted
        pass


def _done(prepared: Prepared, started: float) -> Prepared:
    prepared.prepare_ms = round((time.perf_counter() - started) * 1000, 2)
    return prepared


def _inject(
    prepared: Prepared,
    workspace: Workspace,
    api_key: ApiKey | None,
    wire: Wire,
    body: dict[str, Any],
    options: Options,
    turns: list[Turn],
    query: str,
    started: float,
) -> None:
    """The room the model has left (its window minus the prompt, tools, reply and margin, counted in its
    tokenizer) is the assembly's cap; the context goes in as the format's system block."""
    messages, tools = wire.counted(body)
    count = tokens_count(workspace=workspace, model=prepared.model, messages=messages, tools=tools)
    window = count.context_window or settings.PROXY_UNKNOWN_MODEL_WINDOW
    if count.context_window is None:
        prepared.warnings.append(
            f"model {prepared.model!r} is not in the catalogue: its window is taken as {window} tokens"
        )
    used = math.ceil(count.tokens * (1 + count.margin)) + wire.max_output(body) + INJECTION_OVERHEAD
    if used > math.floor(window * (1 - settings.SAFETY_MARGIN)):
        body, used = _compacted(prepared, workspace, wire, body, window, used)
        prepared.body = body
    if used >= window:
        prepared.warnings.append(
            f"the conversation ({used} tokens with the reply) leaves no room in the {window}-token window"
        )
        return
    assert prepared.session is not None
    params = ContextParams(
        layer_id=prepared.session.pk,
        query=query[:20_000],
        model=prepared.model or None,
        profile=options.profile or None,
        token_budget=options.budget,
        exclude=_carried(prepared, wire, turns),
        context_window=window,
        tokens_used=used,
    )
    result = context_assemble(workspace=workspace, params=params, api_key=api_key, started=started)
    prepared.trace_id = result.trace_id
    prepared.warnings += [w for w in result.warnings if not w.startswith("the context is empty")]
    if result.context.strip():
        prepared.body = wire.inject(body, result.context, before=_before(workspace, options))
        prepared.context_tokens = result.total_tokens


def _before(workspace: Workspace, options: Options) -> bool:
    """Whether the call's profile puts the context before the client's system prompt (else after it)."""
    position = profile_get(workspace=workspace, name=options.profile).context_position if options.profile else ""
    return position == ContextPosition.BEFORE


def _carried(prepared: Prepared, wire: Wire, turns: list[Turn]) -> tuple[str, ...]:
    """What the prompt sent upstream carries already, not to be injected a second time: the stored turns
    it has in full, and the session's own summary when it has every turn. A turn the compaction left
    out or shortened is not among them (nor then the summary), so they may come back when they matter."""
    if prepared.stored is None or prepared.session is None:
        return ()
    sent = {(t.role, t.text) for t in wire.turns(prepared.body)}
    pairs = list(zip(turns, prepared.stored.items, strict=False))
    carried = [f"item:{item}" for turn, item in pairs if item is not None and (turn.role, turn.text) in sent]
    if len(carried) == len(pairs):
        carried.append(f"summary:{prepared.session.pk}")
    return tuple(carried)


def _compacted(
    prepared: Prepared, workspace: Workspace, wire: Wire, body: dict[str, Any], window: int, used: int
) -> tuple[dict[str, Any], int]:
    """The body at the richest resolution that fits the usable window, and what it then uses."""
    limit = math.floor(window * (1 - settings.SAFETY_MARGIN))
    for resolution in LADDER:
        compacted = wire.compact(body, resolution)
        if compacted is None:
            return body, used  # this wire format is not compacted: the upstream decides
        smaller, hidden = compacted
        messages, tools = wire.counted(smaller)
        count = tokens_count(workspace=workspace, model=prepared.model, messages=messages, tools=tools)
        now = math.ceil(count.tokens * (1 + count.margin)) + wire.max_output(smaller) + INJECTION_OVERHEAD
        if now <= limit:
            prepared.warnings.append(
                f"the conversation ({used} tokens with the reply) was compacted to {now} to fit the "
                f"{window}-token window: {hidden} earlier messages left out, the nearest "
                f"{resolution.full_context_distance} kept in full"
            )
            return smaller, now
    return body, used


def call_finish(
    *,
    workspace: Workspace,
    wire: Wire,
    prepared: Prepared,
    upstream_url: str,
    status: int,
    reply: Reply | None,
    stream: bool,
    first_byte_ms: float | None,
    upstream_ms: float | None,
) -> None:
    """Store the reply as the assistant's turn, the reported usage beside our count, and the call."""
    try:
        turn = reply.turn() if reply is not None and status < 400 else None
        stored = prepared.stored
        created = stored.created if stored else 0
        if turn is not None and prepared.session is not None and stored is not None:
            after = turns_store(
                session=prepared.session, turns=[turn], after=stored.last_key, after_item=stored.last_item
            )
            created += after.created
        reported = reply.prompt_tokens if reply is not None else None
        if prepared.sent_count is not None and reported is not None and prepared.model:
            token_observation_record(workspace=workspace, count=prepared.sent_count, reported=reported)
        ProxyCall.objects.create(
            workspace=workspace,
            session=prepared.session,
            kind=wire.kind,
            upstream_url=upstream_url[:500],
            model=prepared.model[:200],
            stream=stream,
            status=status,
            trace_id=prepared.trace_id,
            context_tokens=prepared.context_tokens,
            prompt_tokens=prepared.sent_count.tokens if prepared.sent_count else None,
            reported_prompt_tokens=reported,
            reported_completion_tokens=reply.completion_tokens if reply is not None else None,
            turns_stored=created,
            prepare_ms=prepared.prepare_ms,
            first_byte_ms=first_byte_ms,
            upstream_ms=upstream_ms,
            warnings=prepared.warnings,
        )
    except Exception:  # the answer has gone to the client already; the call's record is lost, said in the log
        log.exception("proxy: storing the reply failed")
