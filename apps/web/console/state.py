"""State dumps for developers: a workspace's and a layer's moving parts, as plain JSON-ready dicts.

The page renders the same dict it offers as a download, so what one reads is what one gets.
A fixed number of queries per dump (the per-layer figures come from grouped counts).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from apps.assembly.selectors import records_count
from apps.conversations.selectors import communities_list, graph_state_get
from apps.core import background
from apps.core.periodic_runs import periodic_runs_by_task
from apps.core.versions import content_version_peek
from apps.layers.models import Layer
from apps.layers.selectors import layer_item_counts, layers_with_item_counts
from apps.summaries import caching as summary_cache
from apps.summaries.config import config_of, config_stored, configs_of
from apps.summaries.selectors import provider_health_get, summaries_of_layer, summary_figures, usage_get
from apps.summaries.triggers import trigger_reason
from apps.workspaces.models import Workspace
from apps.workspaces.selectors import workspace_status


def _schedule(*, installation: bool) -> list[dict[str, Any]]:
    """The periodic schedule with each task's last run (PeriodicRun), in schedule order.

    The tasks sweep every workspace, so a last error may quote another workspace's rows: it is given
    only with `installation` (a superuser's dump); a workspace's dump says whether the run failed.
    """
    runs = periodic_runs_by_task()
    out = []
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        run = runs.get(str(entry["task"]))
        row: dict[str, Any] = {
            "name": name,
            "task": entry["task"],
            "every_seconds": entry["schedule"]
            if isinstance(entry["schedule"], int | float)
            else str(entry["schedule"]),
            "runs": run.runs if run else 0,
            "failures": run.failures if run else 0,
            "last_started_at": run.last_started_at if run else None,
            "last_finished_at": run.last_finished_at if run else None,
            "last_ok": run.last_ok if run else None,
        }
        if installation:
            row["last_error"] = run.last_error if run else ""
        out.append(row)
    return out


def _provider_health(workspace: Workspace) -> dict[str, Any]:
    health = provider_health_get(workspace_id=workspace.pk)
    return {
        "summary_provider": settings.SUMMARY_PROVIDER,
        "summary_llm_model": settings.SUMMARY_LLM_MODEL if settings.SUMMARY_PROVIDER == "llm" else None,
        "consecutive_llm_failures": health.consecutive_failures if health else 0,
        "alert_after": settings.SUMMARY_LLM_ALERT_AFTER,
        "last_error": health.last_error if health else "",
        "last_failure_at": health.last_failure_at if health else None,
    }


def _usage_today(workspace: Workspace, now: datetime) -> dict[str, Any]:
    usage = usage_get(workspace_id=workspace.pk, day=now.date())
    return {
        "day": now.date().isoformat(),
        "calls": usage.calls if usage else 0,
        "tokens": (usage.prompt_tokens + usage.completion_tokens) if usage else 0,
        "usd": round(usage.usd, 6) if usage else 0.0,
        "daily_token_budget": settings.SUMMARY_DAILY_TOKEN_BUDGET,
        "daily_usd_budget": settings.SUMMARY_DAILY_USD_BUDGET,
    }


def _cache_status(workspace: Workspace) -> dict[str, Any]:
    return {
        "backend": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
        "assembly_cache_seconds": settings.ASSEMBLY_CACHE_SECONDS,
        "content_version": content_version_peek(workspace.pk),
        "summary_cache_seconds": settings.SUMMARY_CACHE_SECONDS,
        "query_embedding_cache_seconds": settings.QUERY_EMBEDDING_CACHE_SECONDS,
    }


def workspace_state(*, workspace: Workspace, installation: bool = False, now: datetime | None = None) -> dict[str, Any]:
    """The workspace: counts, embedding backlog, queue, providers and their health, LLM spend today,
    caches, the periodic schedule with its last runs (their errors only with `installation`: a
    superuser's), and every layer's summary and item figures."""
    now = now or timezone.now()
    layers = layers_with_item_counts(workspace=workspace)
    configs = configs_of(layers=layers)
    summaries = summary_figures(workspace_id=workspace.pk)
    layer_rows = []
    for layer in layers:
        config = configs[layer.pk]
        layer_rows.append(
            {
                "id": layer.pk,
                "kind": layer.kind,
                "name": layer.name,
                "external_id": layer.external_id,
                "parent": layer.parent_id,
                "items": layer.item_count,  # type: ignore[attr-defined]  # annotated by the selector
                "items_pending_embedding": layer.pending,  # type: ignore[attr-defined]
                "summaries": sorted(summaries.get(layer.pk, {}).get("depths", [])),
                "summary_source_hashes": sorted(summaries.get(layer.pk, {}).get("hashes", set())),
                "summaries_stale": summaries.get(layer.pk, {}).get("stale", False),
                "summarized_at": summaries.get(layer.pk, {}).get("generated_at"),
                "changes_since_summary": config.changes_since_summary,
                "update_on_changes": config.update_on_changes,
                "due": trigger_reason(config, now=now),
            }
        )
    return {
        "kind": "workspace",
        "generated_at": now,
        "workspace": {"slug": workspace.slug, "name": workspace.name, "created_at": workspace.created_at},
        "status": workspace_status(workspace=workspace),
        "provider_health": _provider_health(workspace),
        "summary_llm_usage_today": _usage_today(workspace, now),
        "cache": _cache_status(workspace),
        "schedule": _schedule(installation=installation),
        "schedule_errors_shown": installation,
        "assemblies_last_24h": records_count(workspace_id=workspace.pk, since=now - timedelta(days=1)),
        "layers": layer_rows,
    }


def layer_state(*, layer: Layer, installation: bool = False, now: datetime | None = None) -> dict[str, Any]:
    """One layer: its effective config and trigger counters, its summaries (hash, provider, stale,
    cache entry), its items and their embedding backlog, its conversation graph and recent use, and
    what it depends on: the background queue, the summary provider's health, the caches and the
    periodic schedule that embeds, summarizes and sweeps it (its errors only with `installation`)."""
    now = now or timezone.now()
    config = config_of(layer=layer)
    stored = config_stored(layer=layer)
    summary_rows = summaries_of_layer(layer_id=layer.pk)
    graph = graph_state_get(layer=layer)
    due = trigger_reason(config, now=now)
    next_by_time = (
        config.last_summarized_at + timedelta(seconds=config.update_interval_seconds)
        if config.last_summarized_at
        else None
    )
    return {
        "kind": "layer",
        "generated_at": now,
        "layer": {
            "id": layer.pk,
            "kind": layer.kind,
            "name": layer.name,
            "external_id": layer.external_id,
            "parent": layer.parent_id,
            "workspace": layer.workspace.slug,
            "created_at": layer.created_at,
        },
        "config": {**asdict(config), "stored": stored, "personalized": config.personalized},
        "trigger": {
            "changes_since_summary": config.changes_since_summary,
            "update_on_changes": config.update_on_changes,
            "last_summarized_at": config.last_summarized_at,
            "next_by_time_at": next_by_time,
            "due_now": due,
        },
        "summaries": [
            {
                "depth": row.depth,
                "for": row.personalized_for.get_username() if row.personalized_for else None,
                "provider": row.provider,
                "source_hash": row.source_hash,
                "token_count": row.token_count,
                "generated_at": row.generated_at,
                "stale": row.stale,
                "text": row.text,
            }
            for row in summary_rows
        ],
        "cache": {
            **_cache_status(layer.workspace),
            "summary_entry_cached": summary_cache.get(layer.pk, None) is not None,
        },
        "background": {"mode": settings.BACKGROUND_MODE, "queue_depth": background.queue_depth()},
        "provider_health": _provider_health(layer.workspace),
        "schedule": _schedule(installation=installation),
        "schedule_errors_shown": installation,
        "items": layer_item_counts(layer=layer),
        "conversation": {
            "communities": communities_list(layer=layer).count(),
            "graph_computed_at": graph.computed_at if graph else None,
            "graph_messages": graph.message_count if graph else None,
            "graph_pending_embeddings": graph.pending_embeddings if graph else None,
        },
        "assemblies_last_24h": records_count(layer_id=layer.pk, since=now - timedelta(days=1)),
    }
