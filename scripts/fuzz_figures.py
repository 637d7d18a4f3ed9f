"""The figures of a `make fuzz` run, from schemathesis' summary: cases, server errors, schema violations.

Usage: fuzz_figures.py DIR (reads DIR/schemathesis.txt); exits 1 when the run had fewer than
MIN_CASES cases (unless FUZZ_EXAMPLES was lowered), a failure or an error.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

MIN_CASES = 5000
SERVER_ERROR = "Server error"


def figures(summary: str) -> dict[str, int]:
    tail = summary[summary.rfind("SUMMARY") :]
    counts = {name: 0 for name in ("generated", "passed", "failed", "errored", "skipped")}
    cases = re.search(r"Test cases:\s*\n\s*(.+)", tail)
    for number, name in re.findall(r"(\d+) (generated|passed|failed|errored|skipped)", cases.group(1) if cases else ""):
        counts[name] = int(number)
    failures = re.search(r"Failures:\s*\n((?:[ \t]+\S.*\n)+)", tail)
    server = violations = 0
    for name, number in re.findall(r"^[ \t]+\S+[ \t]+(.+?): (\d+)[ \t]*$", failures.group(1) if failures else "", re.M):
        if SERVER_ERROR in name:  # "ST101 Server error"
            server += int(number)
        else:
            violations += int(number)
    errors = re.search(r"Errors:\s*\n((?:[ \t]+\S.*\n)+)", tail)
    network = sum(int(n) for n in re.findall(r": (\d+)\s*$", errors.group(1) if errors else "", re.M))
    return {"cases": counts["generated"], "server_errors": server, "schema_violations": violations, "errors": network}


def main(directory: str) -> int:
    found = figures(Path(directory, "schemathesis.txt").read_text())
    print(
        f"fuzz: {found['cases']} cases, {found['server_errors']} server errors, "
        f"{found['schema_violations']} schema violations, {found['errors']} other errors"
    )
    enough = found["cases"] >= MIN_CASES or "FUZZ_EXAMPLES" in os.environ
    clean = not (found["server_errors"] or found["schema_violations"] or found["errors"])
    return 0 if enough and clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
