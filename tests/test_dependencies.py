"""Dependencies point one way (ARCHITECTURE.md, "Dependencies"): no app imports an app above it.

Read from the source (AST), so an import inside a function counts as much as one at the top. Apps
on one level may import each other; the project package `contextarch/` sits above every app: it may
import any of them, and none may import it. A lower app offers a hook (a signal or a registry) that a
higher one answers.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The level of each app, lowest first (ARCHITECTURE.md). `metrics` is a base like `core`: its registry
# is counted into from every level, and it imports no app.
LEVELS: dict[str, int] = {
    "core": 0,
    "metrics": 0,
    "engine": 1,  # the pure engine: the standard library and core's pure parts only (test below)
    "workspaces": 1,
    "erasure": 1,  # runs every app's erasure hooks (core/erasure.py) and keeps the receipts
    "layers": 2,
    "tokens": 2,
    "summaries": 3,
    "conversations": 3,
    "error_patterns": 3,
    "redaction": 3,
    "profiles": 3,
    "assembly": 4,
    "consumption": 5,
    "web": 5,
    "experiments": 5,  # question sets asked with two profiles (the pages' experiments; the lab imports its recall)
    "mcp_server": 5,
    "proxy": 5,  # the LLM proxy: stores turns, assembles, forwards; the pages read it
    "bench": 6,  # the lab: imports what it measures, nothing imports it
}
PROJECT = "contextarch"  # above every app


# A model named by its label ("layers.Item", as `apps.get_model` and lazy relations take it) is a
# dependency on its app as much as an import is.
MODEL_LABEL = re.compile(r"(?P<app>[a-z_]+)\.[A-Z][A-Za-z0-9]*")


def imported_apps(path: Path) -> set[str]:
    """The apps a module imports, at the top or inside a function (relative imports stay in their app),
    or whose models it names by label."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            label = MODEL_LABEL.fullmatch(node.value)
            if label and label["app"] in LEVELS:
                found.add(label["app"])
            continue
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
        "    from apps.assembly.services import context_assemble\n"
        "    import apps.layers.models\n"
        "    from apps import summaries\n"
        "    from . import sibling\n"
        "    from contextarch.settings import BASE_DIR\n",
        encoding="utf-8",
    )
    assert imported_apps(module) == {"core", "assembly", "layers", "summaries", PROJECT}


def test_the_check_sees_models_named_by_label(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'WATCHED = ("layers.Item", "profiles.AgentProfile")\n'
        'def f(apps):\n    return apps.get_model("summaries.Summary")\n'
        'NOT_A_LABEL = ("layers.items", "django.Model", "see layers.Item for why")\n',
        encoding="utf-8",
    )
    assert imported_apps(module) == {"layers", "profiles", "summaries"}


def test_nothing_imports_the_lab() -> None:
    """The benchmarks and evaluations (`apps/bench`) measure the product: no other app and not the
    project package may need them."""
    product = [p for p in (ROOT / "apps").rglob("*.py") if p.relative_to(ROOT / "apps").parts[0] != "bench"]
    product += (ROOT / PROJECT).rglob("*.py")
    assert sorted(str(p.relative_to(ROOT)) for p in product if "bench" in imported_apps(p)) == []


# What the engine may import besides the standard library and itself: core's pure parts.
ENGINE_MAY_IMPORT = frozenset({"apps.core.text", "apps.core.fusion"})


def engine_imports() -> set[tuple[str, str]]:
    """(module, imported name) for every import of `apps/engine` outside the standard library."""
    import sys

    found = set()
    for path in sorted((ROOT / "apps" / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or name.startswith("apps.engine") or name in ENGINE_MAY_IMPORT:
                    continue
                found.add((str(path.relative_to(ROOT)), name))
    return found


def test_the_engine_is_pure() -> None:
    """The engine is plain Python over frozen dataclasses: no Django, no ORM, no other app; it gets
    its token counter as a function, so it runs and is property-tested without a database."""
    assert sorted(engine_imports()) == []


# --- Each app reads and writes its own tables --------------------------------------------------------
# A use of another app's rows: its model's manager (`Item.objects`, `_default_manager`, `_base_manager`),
# `Item._meta.db_table` (raw SQL built on its table's name), or a string naming its table (`"layers_item"`).
# They are counted per app and owner and held to CROSS_APP_BASELINE, which may only shrink: a new read
# goes through the owner's selectors, a new write through its services. The lab (`apps/bench`) seeds
# and measures every app's tables on purpose and is not counted.
CROSS_APP_BASELINE: dict[tuple[str, str], int] = {
    ("assembly", "conversations"): 3,
    ("assembly", "layers"): 13,
    ("assembly", "workspaces"): 1,
    ("conversations", "layers"): 9,
    ("summaries", "layers"): 3,
}
MANAGERS = frozenset({"objects", "_default_manager", "_base_manager"})


def _model_classes(path: Path) -> list[tuple[str, str | None]]:
    """(class name, Meta.db_table or None) of the concrete models defined at the top of a module."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ClassDef) or not any(ast.unparse(b).endswith("Model") for b in node.bases):
            continue
        meta = {
            target.id: statement.value
            for sub in node.body
            if isinstance(sub, ast.ClassDef) and sub.name == "Meta"
            for statement in sub.body
            if isinstance(statement, ast.Assign)
            for target in statement.targets
            if isinstance(target, ast.Name)
        }
        if isinstance(meta.get("abstract"), ast.Constant) and meta["abstract"].value is True:
            continue
        table = meta.get("db_table")
        found.append((node.name, table.value if isinstance(table, ast.Constant) else None))
    return found


@functools.cache
def app_models() -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """({(app, model name): app}, {table: app}) from every app's models.py or models/ package."""
    models, tables = {}, {}
    for app in LEVELS:
        directory = ROOT / "apps" / app
        for path in [directory / "models.py", *sorted((directory / "models").glob("*.py"))]:
            if path.exists():
                for name, table in _model_classes(path):
                    models[(app, name)] = app
                    tables[table or f"{app}_{name.lower()}"] = app
    return models, tables


@functools.cache
def _table_names() -> re.Pattern[str]:
    tables = app_models()[1]
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, tables), key=len, reverse=True)) + r")\b")


def cross_app_uses(path: Path, app: str) -> list[tuple[str, int, str]]:
    """(owner app, line, what) of each use of another app's rows in one module of `app`."""
    models, tables = app_models()
    named = _table_names()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes: dict[str, str] = {}  # local name -> owning app
    modules: dict[str, str] = {}  # local name of an app's models module -> app
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("apps."):
            parts = (node.module or "").split(".")
            for alias in node.names:
                if (parts[1], alias.name) in models and parts[2:3] == ["models"]:
                    classes[alias.asname or alias.name] = parts[1]
                if alias.name == "models" and len(parts) == 2:
                    modules[alias.asname or alias.name] = parts[1]
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (node.attr in MANAGERS or node.attr == "db_table"):
            target = node.value
            if node.attr == "db_table":
                if not (isinstance(target, ast.Attribute) and target.attr == "_meta"):
                    continue
                target = target.value
            owner = None
            if isinstance(target, ast.Name):
                owner = classes.get(target.id)
            elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                module_app = modules.get(target.value.id)
                owner = module_app if (module_app, target.attr) in models else None
            if owner is not None and owner != app:
                uses.append((owner, node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            uses += [(tables[t], node.lineno, t) for t in named.findall(node.value) if tables[t] != app]
    return uses


@functools.cache
def cross_app_counts() -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], list[str]]]:
    """Uses of other apps' rows per (app, owner), and where they are, over every app but the lab."""
    counts: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], list[str]] = {}
    for path in sorted((ROOT / "apps").rglob("*.py")):
        parts = path.relative_to(ROOT / "apps").parts
        if len(parts) < 2 or parts[0] == "bench" or "migrations" in parts:
            continue
        for owner, line, what in cross_app_uses(path, parts[0]):
            counts[(parts[0], owner)] = counts.get((parts[0], owner), 0) + 1
            where.setdefault((parts[0], owner), []).append(f"{path.relative_to(ROOT)}:{line} {what}")
    return counts, where


def test_no_app_uses_another_apps_rows_more_than_the_baseline() -> None:
    """A new read of another app's rows goes through its selectors, a new write through its services."""
    counts, where = cross_app_counts()
    grown = {pair: where[pair] for pair, n in counts.items() if n > CROSS_APP_BASELINE.get(pair, 0)}
    assert grown == {}


def test_the_baseline_is_lowered_as_uses_go() -> None:
    """A use taken away lowers the baseline with it, so it can never come back unseen."""
    counts, _ = cross_app_counts()
    above = {pair: (n, counts.get(pair, 0)) for pair, n in CROSS_APP_BASELINE.items() if counts.get(pair, 0) < n}
    assert above == {}, "(baseline, count now): lower CROSS_APP_BASELINE to the count"


def test_the_count_sees_managers_tables_and_table_names(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Docstrings may name layers_item."""\n'
        "from apps.layers.models import Item as LayerItem, Layer\n"
        "from apps.summaries import models as summary_models\n"
        "from apps.assembly.models import AssemblyRecord\n"
        "def f():\n"
        "    LayerItem.objects.filter(pk=1)\n"
        "    summary_models.Summary._default_manager.all()\n"
        '    sql = f"SELECT 1 FROM {Layer._meta.db_table} JOIN layers_item USING (id)"\n'
        "    AssemblyRecord.objects.all()  # its own app's\n",
        encoding="utf-8",
    )
    assert sorted((owner, line) for owner, line, _ in cross_app_uses(module, "assembly")) == [
        ("layers", 6),
        ("layers", 8),
        ("layers", 8),
        ("summaries", 7),
    ]
