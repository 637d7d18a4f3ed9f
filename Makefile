# The project's commands (see README.md). Everything runs from .venv, created on first use.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
# A copy of the requirements last installed: pip runs again only when requirements.txt changes.
INSTALLED := $(VENV)/requirements.installed

.PHONY: install run test lint fuzz typescript-types

install: $(INSTALLED)

$(PY):
	python3 -m venv $(VENV)

$(INSTALLED): requirements.txt | $(PY)
	@if cmp -s requirements.txt $(INSTALLED); then touch $(INSTALLED); else \
		echo "Installing requirements.txt into $(VENV)"; \
		$(PY) -m pip install --disable-pip-version-check --quiet -r requirements.txt && \
		cp requirements.txt $(INSTALLED); fi

run: install
	@scripts/run.sh

test: install
	@command -v chromium >/dev/null || { echo "Installing Debian chromium for the browser test"; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium; }
	$(VENV)/bin/pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

# Not part of `make test`: schemathesis against a live server (scripts/fuzz; figures in var/fuzz/).
fuzz: install
	@scripts/fuzz

# The TypeScript client's types from the schema now (clients/typescript/src/schema.ts; the suite checks them).
typescript-types: install
	$(PY) manage.py spectacular --format openapi-json --file var/openapi.json
	cd clients/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run --silent types
