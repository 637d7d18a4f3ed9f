#!/usr/bin/env python
"""Django's command-line entry point for Context Architect."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextarch.settings")
    # Commands are not on a request path: migrations, seeding and benchmarks may run long statements.
    os.environ.setdefault("DB_STATEMENT_TIMEOUT_MS", "0")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
