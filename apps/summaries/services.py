"""Writes of summaries: generate a layer's three depths when its trigger fires, or on demand.

The flow of one layer: effective config → source (items + child summaries) and its hash →
skip when unchanged (logged, counted) → provider (LLM within the daily budget, else extractive)
→ generic summaries, then one personalized set per reader of a personalized layer → counters
reset → the parent counts one change (so roll-ups travel up the tree). An LLM that fails after
its retries leaves the stored summaries in place marked stale, or, with none, raw content cut
at a sentence boundary, and says so in `warnings`. Never called on the context hot path.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import DateTimeField, DurationField, ExpressionWrapper, F, Q, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from apps.core import background
from apps.core.versions import content_changed
from apps.layers.models import KIND_RANK, Layer
from apps.layers.selectors import layer_has_items
from apps.metrics.registry import SUMMARY_FALLBACKS, SUMMARY_GENERATION_TIME, SUMMARY_GENERATIONS, SUMMARY_SKIPS
from apps.summaries import budget, caching, health
from apps.summaries.config import SummaryConfig, config_of
from apps.summaries.llm import BudgetSpent, LlmUnavailable
from apps.summaries.models import DEPTH_TOKEN_LIMITS, LayerConfig, Summary
from apps.summaries.personalization import Reader, readers_of
from apps.summaries.providers import DEPTHS, ExtractiveProvider, Generated, LlmProvider, Provider, llm_worst_case
from apps.summaries.run_counts import run_count_add
from apps.summaries.sources import Source, source_of
from apps.summaries.triggers import trigger_reason
from apps.summaries.truncation import truncate_at_sentence

log = logging.getLogger(__name__)

GENERATED, SKIPPED, DEGRADED = "generated", "skipped", "degraded"


@dataclass
class SummarizeResult:
    """What one run did for one layer: `status`, why, which provider, and any warnings."""

    layer_id: int
    status: str
    reason: str
    provider: str = ""
    warnings: list[str] = field(default_factory=list)
    readers: list[str] = field(default_factory=list)
    marked_stale: int = 0  # summaries this run left marked stale (after an LLM failure)
    cleared: int = 0  # summaries deleted because the layer was emptied


def _personal_hash(source: Source, reader: Reader) -> str:
    return hashlib.sha256(f"{source.digest}\n{reader.concerns}\n{reader.preferences}".encode()).hexdigest()


def _unchanged(rows: list[Summary], digest: str) -> bool:
    return len(rows) == len(DEPTHS) and all(r.source_hash == digest and not r.stale for r in rows)


BUDGET_SPENT = "daily_budget_spent: extractive provider used"


def _pick_provider(
    *,
    workspace_id: int,
    source: Source,
    reader: Reader | None,
    now: datetime,
    sleep: Callable,
    extractive: bool,
    retries: bool = True,
) -> tuple[Provider, str | None]:
    """The LLM when configured and today's budget has room for the call's worst case, else the
    extractive provider. Each LLM attempt then holds its worst case until it settles (budget.py)."""
    if extractive or settings.SUMMARY_PROVIDER != "llm":
        return ExtractiveProvider(), None
    prompt, completion = llm_worst_case(source, reader)
    if not budget.budget_allows(
        workspace_id=workspace_id, day=now.date(), prompt_tokens=prompt, completion_tokens=completion
    ):
        return _budget_spent(workspace_id), BUDGET_SPENT

    def reserve(prompt_tokens: int, completion_tokens: int) -> budget.Reservation | None:
        return budget.reserve(
            workspace_id=workspace_id, day=now.date(), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )

    return LlmProvider(sleep=sleep, reserve=reserve, retries=retries), None


def _budget_spent(workspace_id: int) -> ExtractiveProvider:
    SUMMARY_FALLBACKS.labels(kind="budget").inc()
    log.info("workspace %s: daily summarization budget spent, using the extractive provider", workspace_id)
    return ExtractiveProvider()


def _write(*, layer: Layer, user_id: int | None, rows: dict[str, dict[str, Any]]) -> None:
    """Insert or update the layer's rows of one reader by depth in two statements, then refresh the cache.

    Bulk writes send no signals, so the content version and the cache entry are updated here.
    Callers hold the layer's run lock (layer_summarize), so no other run writes these rows.
    """
    with transaction.atomic():
        _write_rows(layer=layer, user_id=user_id, rows=rows)


def _write_rows(*, layer: Layer, user_id: int | None, rows: dict[str, dict[str, Any]]) -> None:
    current = {r.depth: r for r in Summary.objects.filter(layer=layer, personalized_for_id=user_id)}
    updates, creates = [], []
    for depth, values in rows.items():
        row = current.get(depth)
        if row is None:
            creates.append(Summary(layer=layer, depth=depth, personalized_for_id=user_id, **values))
        else:
            if row.text != values["text"]:  # the vector was the old text's
                row.embedding, row.embedding_model = None, ""
            for name, value in values.items():
                setattr(row, name, value)
            updates.append(row)
    if updates:
        fields = [*next(iter(rows.values())), "embedding", "embedding_model"]
        Summary.objects.bulk_update(updates, fields=fields)
    if creates:
        Summary.objects.bulk_create(creates)
    content_changed(layer.workspace_id)
    caching.refresh_with_commit(layer.pk, user_id)
    if creates or any(row.embedding is None for row in updates):
        from apps.summaries.tasks import embed_summaries  # tasks import this module

        background.enqueue(embed_summaries, layer.pk)  # after commit: the write never waits for the model


def _store(
    *, layer: Layer, generated: Generated, digest: str, now: datetime, reader: Reader | None, stale: bool = False
) -> None:
    rows = {}
    for depth in DEPTHS:
        text, limit = generated.texts[depth], DEPTH_TOKEN_LIMITS[depth]
        tokens = _count(text)
        if tokens > limit:  # providers guarantee the limit; this keeps it even if one did not
            text = truncate_at_sentence([text], limit)
            tokens = _count(text)
        rows[depth] = {
            "workspace_id": layer.workspace_id,
            "text": text,
            "token_count": tokens,
            "source_hash": digest,
            "generated_at": now,
            "provider": generated.provider,
            "stale": stale,
            "personalization_ref": reader.reference() if reader else {},
        }
        SUMMARY_GENERATIONS.labels(layer_kind=layer.kind, depth=depth, provider=generated.provider.split(":")[0]).inc()
    _write(layer=layer, user_id=reader.user_id if reader else None, rows=rows)


def _degrade(*, layer: Layer, source: Source, existing: list[Summary], now: datetime, error: str) -> list[str]:
    """After the LLM failed: keep stored summaries marked stale; fill missing depths by truncation."""
    have = {row.depth for row in existing}
    warnings = []
    if have:
        Summary.objects.filter(pk__in=[r.pk for r in existing]).update(stale=True)
        content_changed(layer.workspace_id)
        caching.refresh_with_commit(layer.pk, None)
        SUMMARY_FALLBACKS.labels(kind="stale").inc()
        warnings.append(f"llm_unavailable: serving the stored {', '.join(sorted(have))} summaries marked stale")
    missing = [d for d in DEPTHS if d not in have]
    if missing:
        rows = {}
        for depth in missing:
            text = truncate_at_sentence(source.texts, DEPTH_TOKEN_LIMITS[depth])
            rows[depth] = {
                "workspace_id": layer.workspace_id,
                "text": text,
                "token_count": _count(text),
                "source_hash": source.digest,
                "generated_at": now,
                "provider": "truncated",
                "stale": True,
                "personalization_ref": {},
            }
        _write(layer=layer, user_id=None, rows=rows)
        SUMMARY_FALLBACKS.labels(kind="truncated").inc()
        warnings.append(
            f"llm_unavailable: {', '.join(missing)} summaries are raw content truncated at a sentence boundary"
        )
    log.warning("layer %s: degraded summarization after LLM failure (%s): %s", layer.pk, error, "; ".join(warnings))
    return warnings


def _count(text: str) -> int:
    from apps.core.tokenizer import count_tokens, encoding_for_model

    return count_tokens(text, encoding_for_model(settings.DEFAULT_MODEL).encoding)


def _reset_counters(*, layer: Layer, seen_changes: int, now: datetime) -> None:
    """Both triggers restart; changes counted while generating are kept for the next run."""
    LayerConfig.objects.filter(layer=layer).update(
        changes_since_summary=Greatest(F("changes_since_summary") - seen_changes, Value(0)), last_summarized_at=now
    )


def _notify_parent(layer: Layer) -> None:
    """A regenerated child counts as one change of its parent (hierarchical roll-up)."""
    if layer.parent_id is None:
        return
    changes_add(layer_id=layer.parent_id, count=1)


def _clear(layer: Layer) -> int:
    """Delete the summaries of an emptied layer (they describe content that is gone) and have its
    parent summarize again now, so the removed text leaves the roll-up too. The number deleted."""
    with transaction.atomic():
        cleared, _ = Summary.objects.filter(layer=layer).delete()  # per-row signals refresh the cache
        if cleared:
            content_changed(layer.workspace_id)
    if cleared:
        log.info("layer %s: emptied, its %d summaries deleted; the parent summarizes again", layer.pk, cleared)
        if layer.parent_id is not None:
            from apps.summaries.tasks import summarize_layer_now

            parent_id = layer.parent_id
            transaction.on_commit(lambda: background.enqueue(summarize_layer_now, parent_id))
    return cleared


def _skip(layer: Layer, config: SummaryConfig, reason: str, why: str, now: datetime) -> SummarizeResult:
    SUMMARY_SKIPS.labels(reason=reason).inc()
    log.info("layer %s (%s): summary regeneration skipped: %s", layer.pk, layer.kind, why)
    _reset_counters(layer=layer, seen_changes=config.changes_since_summary, now=now)
    return SummarizeResult(layer_id=layer.pk, status=SKIPPED, reason=reason)


def layer_summarize(
    *,
    layer: Layer,
    now: datetime | None = None,
    force: bool = False,
    trigger: str = "forced",
    sleep: Callable[[float], None] = time.sleep,
    extractive: bool = False,
    retries: bool = True,
) -> SummarizeResult:
    """Regenerate the layer's summaries (all depths; generic, then per reader when personalized).

    `force` ignores skip-if-unchanged; `extractive` uses the extractive provider whatever the
    settings (the demo seed). `sleep` is the LLM retry backoff's (tests inject it). One run per
    layer at a time: concurrent triggers (beat, change, API) wait on the layer's run lock, a
    PostgreSQL advisory lock rather than a row lock, so that no transaction stays open while an
    LLM answers (up to its retries); each reader's rows are written in a short transaction.
    """
    with _run_lock(layer.pk):
        try:
            result = _summarize(
                layer=layer, now=now, force=force, trigger=trigger, sleep=sleep, extractive=extractive, retries=retries
            )
        except Exception:
            run_count_add(workspace_id=layer.workspace_id, at=now or timezone.now(), outcome="failed")
            raise
    run_count_add(
        workspace_id=layer.workspace_id,
        at=now or timezone.now(),
        outcome=_outcome(result),
        marked_stale=result.marked_stale,
    )
    return result


def _outcome(result: SummarizeResult) -> str:
    """How a run counts on the dashboard (apps/summaries/run_counts.py OUTCOMES)."""
    if result.status == DEGRADED:
        return "failed"
    if result.status == SKIPPED:
        return "skipped" if result.reason == "unchanged" else "empty"
    return "generated"


RUN_LOCK_NAMESPACE = 0x5355 << 48  # "SU": summary runs, apart from any other advisory lock


@contextmanager
def _run_lock(layer_id: int) -> Iterator[None]:
    """The layer's session-level advisory lock, waited for and released on exit."""
    key = RUN_LOCK_NAMESPACE | layer_id
    with connection.cursor() as cur:
        # The wait is for another run of this layer (an LLM may take minutes), not a stuck row:
        # it is exempt from the connection's lock_timeout (DB_LOCK_TIMEOUT_MS), restored after.
        cur.execute("SELECT set_config('lock_timeout', '0', false)")
        try:
            cur.execute("SELECT pg_advisory_lock(%s)", [key])
        finally:
            cur.execute("SELECT set_config('lock_timeout', %s, false)", [f"{settings.DB_LOCK_TIMEOUT_MS}ms"])
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [key])


def _summarize(
    *,
    layer: Layer,
    now: datetime | None,
    force: bool,
    trigger: str,
    sleep: Callable[[float], None],
    extractive: bool,
    retries: bool = True,
) -> SummarizeResult:
    now = now or timezone.now()
    started = time.perf_counter()
    config = config_of(layer=layer)
    source = source_of(layer=layer)
    if source.empty:
        cleared = _clear(layer)
        result = _skip(layer, config, "no_content", "the layer has no items and no child summaries", now)
        result.cleared = cleared
        return result
    existing = list(Summary.objects.filter(layer=layer, personalized_for__isnull=True))
    readers = readers_of(layer=layer, now=now) if config.personalized else []
    personal_rows: dict[int, list[Summary]] = {}
    for row in Summary.objects.filter(layer=layer, personalized_for__isnull=False):
        personal_rows.setdefault(row.personalized_for_id, []).append(row)  # type: ignore[arg-type]
    gone = set(personal_rows) - {r.user_id for r in readers}
    if gone:  # readers without recent session content (or a layer no longer personalized) read the generic one
        Summary.objects.filter(layer=layer, personalized_for_id__in=gone).delete()
    todo = [r for r in readers if force or not _unchanged(personal_rows.get(r.user_id, []), _personal_hash(source, r))]
    generic_current = _unchanged(existing, source.digest)
    if not force and config.skip_if_unchanged and generic_current and not todo:
        return _skip(
            layer, config, "unchanged", f"source hash {source.digest[:12]} is unchanged (trigger: {trigger})", now
        )

    result = SummarizeResult(layer_id=layer.pk, status=GENERATED, reason=trigger)
    # No transaction around this: an LLM may take its time; _write keeps each reader's rows atomic.
    if force or not generic_current or not config.skip_if_unchanged:
        provider, note = _pick_provider(
            workspace_id=layer.workspace_id,
            source=source,
            reader=None,
            now=now,
            sleep=sleep,
            extractive=extractive,
            retries=retries,
        )
        result.warnings += [note] if note else []
        try:
            generated = _generate(layer=layer, provider=provider, source=source, reader=None, now=now)
        except LlmUnavailable as exc:
            health.failure_record(workspace_id=layer.workspace_id, error=exc.last_error, now=now)
            result.status, result.provider = DEGRADED, provider.name
            result.warnings += _degrade(layer=layer, source=source, existing=existing, now=now, error=exc.last_error)
            result.marked_stale = len(DEPTHS)  # the stored depths marked stale, the missing ones truncated (stale)
            return result  # counters stay: the next trigger tries again
        _store(layer=layer, generated=generated, digest=source.digest, now=now, reader=None)
        result.provider = generated.provider
        result.warnings += [generated.note] if generated.note else []
    for reader in todo:
        provider, note = _pick_provider(
            workspace_id=layer.workspace_id,
            source=source,
            reader=reader,
            now=now,
            sleep=sleep,
            extractive=extractive,
            retries=retries,
        )
        try:
            generated = _generate(
                layer=layer,
                provider=provider,
                source=source,
                reader=reader,
                now=now,
                personalization=config.personalization,
            )
        except LlmUnavailable as exc:
            health.failure_record(workspace_id=layer.workspace_id, error=exc.last_error, now=now)
            result.warnings.append(f"llm_unavailable: no personalized summary for {reader.username}")
            continue
        _store(layer=layer, generated=generated, digest=_personal_hash(source, reader), now=now, reader=reader)
        result.readers.append(reader.username)
        result.provider = result.provider or generated.provider
    _reset_counters(layer=layer, seen_changes=config.changes_since_summary, now=now)
    if not generic_current:
        transaction.on_commit(lambda: _notify_parent(layer))
    SUMMARY_GENERATION_TIME.labels(layer_kind=layer.kind, provider=(result.provider or "none").split(":")[0]).observe(
        (time.perf_counter() - started) * 1000
    )
    log.info(
        "layer %s (%s): summaries generated by %s (trigger: %s, readers: %s)",
        layer.pk,
        layer.kind,
        result.provider,
        trigger,
        ", ".join(result.readers) or "-",
    )
    return result


def _generate(
    *, layer: Layer, provider: Provider, source: Source, reader: Reader | None, now: datetime, personalization: str = ""
) -> Generated:
    try:  # the LLM's usage is counted by its budget reservations (llm.chat settles each attempt)
        generated = provider.summarize(source, reader=reader, personalization=personalization)
    except BudgetSpent:  # another run took the room between the check and this attempt
        extractive = _budget_spent(layer.workspace_id)
        generated = extractive.summarize(source, reader=reader, personalization=personalization)
        return Generated(texts=generated.texts, provider=generated.provider, note=BUDGET_SPENT)
    if isinstance(provider, LlmProvider):
        health.success_record(workspace_id=layer.workspace_id)
    return generated


def layer_summarize_if_due(
    *, layer: Layer, now: datetime | None = None, sleep: Callable = time.sleep
) -> SummarizeResult | None:
    """Run the layer's summaries when its time or change trigger has fired; None when not due."""
    now = now or timezone.now()
    reason = trigger_reason(config_of(layer=layer), now=now)
    if reason is None:
        return None
    return layer_summarize(layer=layer, now=now, trigger=reason, sleep=sleep)


def fair_order(due: list[tuple[Layer, str]]) -> list[tuple[Layer, str]]:
    """Deepest first (parents roll up fresh child summaries); within a depth the workspaces take turns,
    oldest layer first in each, so one tenant's thousand due layers never hold back another's (issue 26)."""
    turns: Counter[tuple[int, int]] = Counter()
    keyed = []
    for layer, reason in sorted(due, key=lambda pair: (-KIND_RANK[pair[0].kind], pair[0].pk)):
        depth = -KIND_RANK[layer.kind]
        turn = turns[(depth, layer.workspace_id)]
        turns[(depth, layer.workspace_id)] += 1
        keyed.append(((depth, turn, layer.pk), layer, reason))
    keyed.sort(key=lambda entry: entry[0])
    return [(layer, reason) for _, layer, reason in keyed]


def summarize_due_layers(
    *,
    workspace_id: int | None = None,
    now: datetime | None = None,
    sleep: Callable = time.sleep,
    extractive: bool = False,
) -> list[SummarizeResult]:
    """The beat sweep: every due layer, deepest first so parents roll up fresh child summaries."""
    now = now or timezone.now()
    interval = ExpressionWrapper(F("config__update_interval_seconds") * Value(timedelta(seconds=1)), DurationField())
    maybe_due = (  # the SQL pre-filter; trigger_reason decides on the validated config
        Q(config__isnull=True)
        | Q(config__last_summarized_at__isnull=True)
        | Q(config__changes_since_summary__gte=F("config__update_on_changes"))
        | Q(config__last_summarized_at__lte=ExpressionWrapper(Value(now) - interval, DateTimeField()))
    )
    layers = Layer.objects.select_related("config").filter(maybe_due)
    if workspace_id is not None:
        layers = layers.filter(workspace_id=workspace_id)
    due = []
    for layer in layers:
        stored = getattr(layer, "config", None)
        reason = trigger_reason(config_of(layer=layer, stored=stored), now=now)
        if reason is not None:
            due.append((layer, reason))
    results = []
    for layer, reason in fair_order(due):
        try:
            results.append(layer_summarize(layer=layer, now=now, trigger=reason, sleep=sleep, extractive=extractive))
        except Exception:
            log.exception("layer %s: summarization failed", layer.pk)
    return results


def changes_add(*, layer_id: int, count: int) -> None:
    """Count `count` changes toward the layer's change trigger, in the writer's transaction (item writes,
    through `layers.signals.changes_counted`; a regenerated child), then answer them (`changes_noted`)."""
    LayerConfig.objects.filter(layer_id=layer_id).update(changes_since_summary=F("changes_since_summary") + count)
    changes_noted(layer_id=layer_id)


def changes_noted(*, layer_id: int) -> None:
    """Called after changes are counted: once the threshold is reached, summarize after commit;
    a layer left with summaries but no items (its last item deleted) summarizes now, which clears them."""
    if LayerConfig.objects.filter(layer_id=layer_id, changes_since_summary__gte=F("update_on_changes")).exists():
        from apps.summaries.tasks import summarize_layer_if_due

        background.enqueue(summarize_layer_if_due, layer_id)
    elif (
        not layer_has_items(layer_id=layer_id)
        and Summary.objects.filter(layer_id=layer_id).exists()
        and not Summary.objects.filter(layer__parent_id=layer_id).exists()
    ):
        from apps.summaries.tasks import summarize_layer_now

        background.enqueue(summarize_layer_now, layer_id)
