"""The tests share their helpers on purpose: through tests/support (and a directory's own helper
modules), never by importing a conftest or another test module, and with one fake provider, one
browser launcher and one way to run a server process."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ALLOWED: set[tuple[str, str]] = set()


def imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_test_imports_a_conftest_or_another_test_module() -> None:
    wrong = set()
    for path in TESTS.rglob("*.py"):
        for module in imported(path):
            last = module.rsplit(".", 1)[-1]
            if module.startswith("tests") and (last == "conftest" or last.startswith("test_")):
                wrong.add((str(path.relative_to(TESTS)), module))
    assert wrong == ALLOWED


def test_only_tests_support_starts_http_servers_and_browsers() -> None:
    outside = set()
    for path in TESTS.rglob("*.py"):
        if path.parent.name == "support" or path == Path(__file__):
            continue
        text = path.read_text()
        if "http.server" in imported(path) or "sync_playwright" in text or "ThreadingHTTPServer" in text:
            outside.add(str(path.relative_to(TESTS)))
    assert outside == {"clients/conftest.py"}  # a failing gateway in front of the live server, not a provider
