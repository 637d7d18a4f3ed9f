"""The demo workspace ends up with summaries at every layer that has content, generated offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from apps.layers.models import Layer
from apps.summaries.models import Summary
from contextarch.demo import demo_seed


@pytest.mark.django_db
def test_the_demo_seed_summarizes_every_layer_extractively(tmp_path: Path) -> None:
    with override_settings(SUMMARY_PROVIDER="llm", SUMMARY_LLM_BASE_URL="http://127.0.0.1:9/v1"):  # never asked
        result = demo_seed(credentials_path=tmp_path / "demo.json")
    layers = Layer.objects.filter(workspace__slug=result.credentials.workspace)
    summarized = {s.layer.kind for s in Summary.objects.filter(layer__in=layers, personalized_for__isnull=True)}
    assert summarized == {"company", "org", "team", "project", "multi_session", "session"}
    assert set(Summary.objects.filter(layer__in=layers).values_list("provider", flat=True)) == {"extractive"}
    company = Summary.objects.get(layer__kind="company", layer__in=layers, depth="detailed", personalized_for=None)
    assert "retr" in company.text.lower()  # the payments team's retry work rolls up to the company
