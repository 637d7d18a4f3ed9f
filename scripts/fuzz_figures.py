"""The figures of a `make fuzz` run, from schemathesis' NDJSON event logs, one directory per key.

Usage: fuzz_figures.py DIR ROLE... (reads DIR/openapi.json and DIR/ROLE/ndjson-*.ndjson). For each key and in total:
cases, documented operations answered with a 2xx (of those tested), links followed in the stateful phase
(requests whose values came from an earlier response, and how many distinct links), and failures
by check (`not_a_server_error`, `response_schema_conformance`, ...) and by engine error. Prints
them, writes DIR/figures.json, and exits 1 when a check failed, the engine errored, or the run had
fewer than MIN_CASES cases (unless FUZZ_EXAMPLES was lowered).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

MIN_CASES = 5000
METHODS = ("get", "put", "post", "patch", "delete")


def schema_operations(schema: Path) -> set[str]:
    """ "METHOD /path/" of every operation the schema documents (the coverage phase also tries the others)."""
    paths = json.loads(schema.read_text())["paths"]
    return {f"{method.upper()} {path}" for path, methods in paths.items() for method in methods if method in METHODS}


def key_figures(log: Path, documented: set[str]) -> dict[str, Any]:
    """One schemathesis run's figures, streamed event by event (a log holds every request and answer)."""
    cases = transitions = 0
    tested: set[str] = set()
    answered: set[str] = set()
    links: set[str] = set()
    by_phase: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    with log.open() as lines:
        for line in lines:
            event = json.loads(line)
            name, body = next(iter(event.items()))
            if name == "NonFatalError":
                errors[str(body.get("value", {}).get("type") or body.get("label") or "error")] += 1
            if name != "ScenarioFinished":
                continue
            recorder = body.get("recorder", {})
            interactions = recorder.get("interactions", {})
            for case_id, node in recorder.get("cases", {}).items():
                case = node["value"]
                operation = f"{case['method']} {case['path']}"
                cases += 1
                by_phase[body.get("phase", "?")] += 1
                if operation not in documented:
                    continue
                tested.add(operation)
                status = ((interactions.get(case_id) or {}).get("response") or {}).get("status_code", 0)
                if 200 <= status < 300:
                    answered.add(operation)
                if node.get("is_transition_applied") and node.get("transition"):
                    transitions += 1
                    links.add(node["transition"]["id"])
            for checks in recorder.get("checks", {}).values():
                failures.update(check["name"] for check in checks if check["status"] == "failure")
    return {
        "cases": cases,
        "cases_by_phase": dict(by_phase),
        "operations_tested": len(tested),
        "operations_2xx": len(answered),
        "requests_from_links": transitions,
        "links_followed": len(links),
        "failures": dict(failures),
        "errors": dict(errors),
        "operations_without_2xx": sorted(tested - answered),
        "links": sorted(links),
    }


def summary_line(role: str, found: dict[str, Any]) -> str:
    failed = ", ".join(f"{name} {count}" for name, count in sorted(found["failures"].items())) or "none"
    errors = ", ".join(f"{name} {count}" for name, count in sorted(found["errors"].items())) or "none"
    return (
        f"fuzz {role}: {found['cases']} cases, {found['operations_2xx']}/{found['operations_tested']} operations "
        f"answered 2xx, {found['links_followed']} links followed ({found['requests_from_links']} requests), "
        f"failures: {failed}; errors: {errors}"
    )


def main(directory: str, roles: list[str]) -> int:
    documented = schema_operations(Path(directory, "openapi.json"))
    figures: dict[str, Any] = {}
    for role in roles:
        logs = sorted(Path(directory, role).glob("ndjson-*.ndjson"))
        if not logs:
            print(f"fuzz {role}: no NDJSON log in {directory}/{role}")
            return 1
        figures[role] = key_figures(logs[-1], documented)
        print(summary_line(role, figures[role]))
    runs = list(figures.values())
    failures: Counter[str] = sum((Counter(f["failures"]) for f in runs), Counter())
    errors: Counter[str] = sum((Counter(f["errors"]) for f in runs), Counter())
    never = sorted(set.intersection(*(set(f["operations_without_2xx"]) for f in runs)))
    total = {
        "cases": sum(f["cases"] for f in runs),
        "links_followed": len({link for f in runs for link in f["links"]}),
        "failures": dict(failures),
        "errors": dict(errors),
        "operations_never_2xx": never,
    }
    figures["total"] = total
    Path(directory, "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(
        f"fuzz total: {total['cases']} cases, {total['links_followed']} links followed, "
        f"{sum(failures.values())} failed checks, {sum(errors.values())} errors; "
        f"never 2xx under any key: {', '.join(never) or 'none'}"
    )
    enough = total["cases"] >= MIN_CASES or "FUZZ_EXAMPLES" in os.environ
    return 0 if enough and not failures and not errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
