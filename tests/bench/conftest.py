from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django.fixtures import SettingsWrapper


@pytest.fixture
def eval_cache(settings: SettingsWrapper, tmp_path: Path) -> Path:
    """The evaluations' cache of plain passage vectors (under VAR_DIR) in the test's own directory."""
    settings.VAR_DIR = tmp_path
    return tmp_path / "eval"
