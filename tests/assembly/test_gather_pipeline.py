"""The gather pipeline runs every source of settings.CONTEXT_SOURCES in order over one request: a
source added there gathers beside the built-in ones and sees what they gathered, and a failing one
is left out with its warning while the context comes from the rest."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from apps.assembly.sources import CandidateSource, Found, Gathered, GatherRequest, configured_sources
from apps.engine import Candidate
from tests.support.api import ask, bulk, layer
from tests.support.tenants import Tenant


class NoteSource(CandidateSource):
    """A source that says how many candidates the sources before it gathered."""

    name = "notes"

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        note = Candidate(
            id=1,
            source="error_hint",
            kind="error_hint",
            type="",
            layer_id=request.resolved.layer.pk,
            layer_name="notes",
            content=f"Gathered before the note: {len(gathered.candidates)}.",
            created_at=timezone.now(),
            origin="hint",
        )
        return Found(candidates=(note,))


class BrokenSource(CandidateSource):
    name = "broken notes"

    def gather(self, request: GatherRequest, gathered: Gathered) -> Found:
        raise RuntimeError("a bug in a plug-in source")


@pytest.fixture
def sources() -> Iterator[None]:
    configured_sources.cache_clear()
    added = ["tests.assembly.test_gather_pipeline.NoteSource", "tests.assembly.test_gather_pipeline.BrokenSource"]
    with override_settings(CONTEXT_SOURCES=[*settings.CONTEXT_SOURCES, *added]):
        yield
    configured_sources.cache_clear()


@pytest.mark.django_db
def test_a_source_named_in_settings_gathers_after_the_built_in_ones_and_a_failing_one_is_left_out(
    tenant: Tenant, sources: None
) -> None:
    session = layer(tenant, "session", tenant.root.pk, external_id="s-plug")
    bulk(
        tenant,
        session,
        [
            {"kind": "message", "role": "user", "content": "Otters swim in the brook."},
            {"kind": "memory", "type": "fact", "content": "The brook freezes in January.", "pinned": True},
        ],
    )
    body = ask(tenant, layer=session, query="otters brook", token_budget=500)
    assert "Gathered before the note: 2." in body["context"] and "Otters swim in the brook." in body["context"]
    assert body["warnings"][-1] == "source_failed: broken notes were skipped: the source failed"
