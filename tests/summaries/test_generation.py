"""Generation: exact depth limits, the hash skip, counters, change and time triggers, roll-up."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.core.tokenizer import count_tokens
from apps.layers.services import ItemInput, items_create
from apps.metrics.registry import SUMMARY_GENERATIONS, SUMMARY_SKIPS
from apps.summaries.models import DEPTH_TOKEN_LIMITS, LayerConfig, Summary
from apps.summaries.services import layer_summarize, layer_summarize_if_due, summarize_due_layers
from tests.summaries.helpers import COMPANY_FACTS, TEAM_FACTS, facts, tree
from tests.support.tenants import Tenant, make_tenant

LONG = [
    f"{fact} Note {i}: it was reviewed by the {name} group."
    for i, fact in enumerate(TEAM_FACTS * 6)
    for name in ["platform"]
]


def _texts(layer_id: int) -> dict[str, Summary]:
    return {s.depth: s for s in Summary.objects.filter(layer_id=layer_id, personalized_for__isnull=True)}


def test_it_stores_three_depths_within_their_exact_token_limits(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.team, LONG)
    result = layer_summarize(layer=t.team)
    assert result.status == "generated" and result.provider == "extractive"
    rows = _texts(t.team.pk)
    assert set(rows) == {"sentence", "paragraph", "detailed"}
    for depth, row in rows.items():
        exact = count_tokens(row.text, "o200k_base")
        assert row.token_count == exact <= DEPTH_TOKEN_LIMITS[depth]
        assert exact >= DEPTH_TOKEN_LIMITS[depth] - 8, (depth, exact)  # the target is filled, not just respected
        assert row.source_hash and row.generated_at and row.provider == "extractive" and not row.stale
    assert len(rows["sentence"].text) < len(rows["paragraph"].text) < len(rows["detailed"].text)


def test_it_skips_an_unchanged_source_and_logs_and_counts_why(tenant: Tenant, caplog: pytest.LogCaptureFixture) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS)
    first = layer_summarize(layer=t.team)
    generated_at = _texts(t.team.pk)["detailed"].generated_at
    before = SUMMARY_SKIPS.labels(reason="unchanged")._value.get()
    with caplog.at_level(logging.INFO, logger="apps.summaries.services"):
        again = layer_summarize(layer=t.team, now=timezone.now() + timedelta(hours=2), trigger="interval")
    assert first.status == "generated" and again.status == "skipped" and again.reason == "unchanged"
    assert SUMMARY_SKIPS.labels(reason="unchanged")._value.get() == before + 1
    assert "skipped" in caplog.text and "unchanged" in caplog.text
    assert _texts(t.team.pk)["detailed"].generated_at == generated_at
    # with skip_if_unchanged off, or forced, it regenerates
    LayerConfig.objects.filter(layer=t.team).update(skip_if_unchanged=False)
    assert layer_summarize(layer=t.team, trigger="interval").status == "generated"
    assert layer_summarize(layer=t.team, force=True).status == "generated"


def test_a_changed_item_changes_the_hash_and_the_summary(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.team, TEAM_FACTS[:2])
    layer_summarize(layer=t.team)
    old = _texts(t.team.pk)["detailed"]
    facts(t.team, ["The team moved the retry worker to a token bucket per processor in Redis."])
    assert layer_summarize(layer=t.team, trigger="changes").status == "generated"
    new = _texts(t.team.pk)["detailed"]
    assert new.source_hash != old.source_hash and "token bucket" in new.text


def test_time_and_change_triggers_fire_whichever_first_and_both_reset(tenant: Tenant) -> None:
    t = tree(tenant)
    start = timezone.now()
    LayerConfig.objects.filter(layer=t.project).update(update_interval_seconds=1800, update_on_changes=3)
    facts(t.project, TEAM_FACTS[:1])
    assert layer_summarize_if_due(layer=t.project, now=start).reason == "never_summarized"  # type: ignore[union-attr]
    config = LayerConfig.objects.get(layer=t.project)
    assert config.changes_since_summary == 0 and config.last_summarized_at == start
    # two changes, ten minutes: nothing is due
    facts(t.project, TEAM_FACTS[1:3])
    assert layer_summarize_if_due(layer=t.project, now=start + timedelta(minutes=10)) is None
    # the third change fires the change trigger before the interval
    facts(t.project, TEAM_FACTS[3:4])
    fired = layer_summarize_if_due(layer=t.project, now=start + timedelta(minutes=11))
    assert fired is not None and fired.reason == "changes" and fired.status == "generated"
    config.refresh_from_db()
    assert config.changes_since_summary == 0 and config.last_summarized_at == start + timedelta(minutes=11)
    # no change, but 30 minutes later the time trigger fires (and skips: the source is unchanged)
    assert layer_summarize_if_due(layer=t.project, now=start + timedelta(minutes=40)) is None
    timed = layer_summarize_if_due(layer=t.project, now=start + timedelta(minutes=41))
    assert timed is not None and timed.reason == "unchanged" and timed.status == "skipped"
    config.refresh_from_db()
    assert config.last_summarized_at == start + timedelta(minutes=41)


def test_upper_layers_roll_up_their_children_summaries(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.company, COMPANY_FACTS)
    facts(t.team, TEAM_FACTS)
    results = summarize_due_layers(workspace_id=tenant.workspace.pk)
    kinds = [Summary.objects.filter(layer_id=r.layer_id).first() for r in results if r.status == "generated"]
    assert [s.layer.kind for s in kinds if s] == ["team", "org", "company"]  # deepest first
    company = _texts(t.company.pk)["detailed"].text
    org = _texts(t.org.pk)["detailed"].text
    assert "incident commander" in company
    assert any(word in org for word in ("retry", "Stripe", "charge")) and org in _texts(t.org.pk)["detailed"].text
    assert any(word in company for word in ("retry", "Stripe", "charge")), company  # the team reaches the company
    # a regenerated child counts as a change of its parent
    assert LayerConfig.objects.get(layer=t.org).changes_since_summary >= 0


def test_a_layer_with_no_content_is_skipped_not_filled(tenant: Tenant) -> None:
    t = tree(tenant)
    result = layer_summarize(layer=t.session)
    assert result.status == "skipped" and result.reason == "no_content"
    assert not Summary.objects.filter(layer=t.session).exists()


def test_generation_metrics_count_each_depth_with_the_layer_kind(tenant: Tenant) -> None:
    t = tree(tenant)
    facts(t.project, TEAM_FACTS)
    counter = SUMMARY_GENERATIONS.labels(layer_kind="project", depth="paragraph", provider="extractive")
    before = counter._value.get()
    layer_summarize(layer=t.project)
    assert counter._value.get() == before + 1


@pytest.mark.django_db(transaction=True)
def test_the_change_trigger_fires_after_commit_of_item_writes(wait_background) -> None:  # type: ignore[no-untyped-def]
    t = tree(make_tenant("trigger"))
    LayerConfig.objects.filter(layer=t.session).update(update_on_changes=2)
    items_create(layer=t.session, items=[ItemInput(kind="message", role="user", content="Why did it fail?")])
    wait_background()
    assert not Summary.objects.filter(layer=t.session).exists()  # one change of two
    items_create(
        layer=t.session, items=[ItemInput(kind="message", role="assistant", content="Retry-After was ignored.")]
    )
    wait_background()
    assert Summary.objects.filter(layer=t.session).count() == 3
    assert LayerConfig.objects.get(layer=t.session).changes_since_summary == 0
    # the regenerated session counted as one change of its project
    assert LayerConfig.objects.get(layer=t.project).changes_since_summary == 1


def test_the_beat_sweep_takes_exactly_the_layers_whose_interval_has_passed(tenant: Tenant) -> None:
    t = tree(tenant)
    for layer in (t.company, t.team, t.session):
        facts(layer, TEAM_FACTS[:2])
    start = timezone.now()
    first = summarize_due_layers(workspace_id=tenant.workspace.pk, now=start)
    # the project has no items of its own but rolls up its session's summary
    assert {r.layer_id for r in first if r.status == "generated"} == {
        t.company.pk,
        t.org.pk,
        t.team.pk,
        t.project.pk,
        t.session.pk,
    }
    assert summarize_due_layers(workspace_id=tenant.workspace.pk, now=start + timedelta(minutes=4)) == []
    later = summarize_due_layers(workspace_id=tenant.workspace.pk, now=start + timedelta(minutes=6))
    assert [(r.layer_id, r.reason) for r in later] == [(t.session.pk, "unchanged")]  # 5-minute session interval
    hourly = summarize_due_layers(workspace_id=tenant.workspace.pk, now=start + timedelta(minutes=61))
    assert {r.layer_id for r in hourly} == {t.company.pk, t.org.pk, t.team.pk, t.project.pk, t.session.pk}


def test_a_child_summary_rolls_up_without_its_clipped_last_sentence(tenant: Tenant) -> None:
    from apps.summaries.sources import source_of

    t = tree(tenant)
    now = timezone.now()
    Summary.objects.create(
        workspace=tenant.workspace,
        layer=t.team,
        depth="detailed",
        text="The team owns the charge service. Retries are capped at three per…",
        token_count=14,
        source_hash="h",
        generated_at=now,
        provider="extractive",
    )
    assert source_of(layer=t.org).child_summaries == ("The team owns the charge service.",)
