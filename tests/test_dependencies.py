"""Dependencies point one way (ARCHITECTURE.md, "Dependencies"): no app imports an app above it.

Read from the source (AST), so an import inside a function counts as much as one at the top. Apps
on one level may import each other; the project package `contextarch/` sits above every app: it may
import any of them, and none may import it. A lower app offers a hook (a signal or a registry) that a
higher one answers.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The level of each app, lowest first (ARCHITECTURE.md). `metrics` is a base like `core`: its registry
# is counted into from every level, and it imports no app.
LEVELS: dict[str, int] = {
    "core": 0,
    "metrics": 0,
    "workspaces": 1,
    "layers": 2,
    "summaries": 3,
    "conversations": 3,
    "error_patterns": 3,
    "redaction": 3,
    "profiles": 3,
    "assembly": 4,
    "consumption": 5,
    "web": 5,
    "mcp_server": 5,
}
PROJECT = "contextarch"  # above every app


def imported_apps(path: Path) -> set[str]:
    """The apps a module imports, at the top or inside a function (relative imports stay in their app)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "apps":
            names = [f"apps.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        found |= {name.split(".")[1] for name in names if name.startswith("apps.")}
        found |= {PROJECT for name in names if name == PROJECT or name.startswith(PROJECT + ".")}
    return found


def upward_imports() -> set[tuple[str, str]]:
    found = set()
    for path in sorted((ROOT / "apps").rglob("*.py")):
        parts = path.relative_to(ROOT / "apps").parts
        if len(parts) < 2:
            continue
        app = parts[0]
        above = {other for other in imported_apps(path) if other == PROJECT or LEVELS.get(other, -1) > LEVELS[app]}
        found |= {(str(path.relative_to(ROOT)), other) for other in above}
    return found


def test_every_app_has_a_level() -> None:
    apps = {p.name for p in (ROOT / "apps").iterdir() if (p / "__init__.py").exists() or (p / "apps.py").exists()}
    assert apps == set(LEVELS)


def test_no_app_imports_an_app_above_it() -> None:
    assert sorted(upward_imports()) == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from apps.core import errors\n"
        "def f():\n"
        "    from apps.assembly.engine import Candidate\n"
        "    import apps.layers.models\n"
        "    from apps import summaries\n"
        "    from . import sibling\n"
        "    from contextarch.settings import BASE_DIR\n",
        encoding="utf-8",
    )
    assert imported_apps(module) == {"core", "assembly", "layers", "summaries", PROJECT}
