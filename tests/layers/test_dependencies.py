"""Dependencies point one way: layers imports no app above it, and creating a workspace does not import layers.

The higher apps answer through hooks instead (apps/layers/signals.py, apps/workspaces/signals.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from apps.layers.services import ItemInput, items_create
from tests.conftest import Tenant

ROOT = Path(__file__).resolve().parents[2]
ABOVE_LAYERS = ("summaries", "conversations", "error_patterns", "redaction", "profiles", "assembly", "consumption")
ABOVE_LAYERS += ("console", "web", "mcp_server")


def imported_apps(path: Path) -> set[str]:
    """The apps a module imports, at the top or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
        found |= {name.split(".")[1] for name in names if name.startswith("apps.") and name.count(".") >= 1}
    return found


def test_layers_imports_no_app_above_it() -> None:
    offending = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) & set(ABOVE_LAYERS))
        for path in (ROOT / "apps" / "layers").rglob("*.py")
        if imported_apps(path) & set(ABOVE_LAYERS)
    }
    assert offending == {}


def test_creating_a_workspace_does_not_import_layers() -> None:
    assert "layers" not in imported_apps(ROOT / "apps" / "workspaces" / "services.py")


@pytest.mark.django_db
def test_the_higher_apps_answer_item_writes_through_the_hooks(tenant: Tenant) -> None:
    (decision,) = items_create(
        layer=tenant.root, items=[ItemInput(kind="message", role="user", content="We decided to ship on Friday.")]
    )
    assert decision.importance == 0.9 and decision.metadata["importance_source"] == "decision"  # conversations
