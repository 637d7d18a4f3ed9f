#!/usr/bin/env bash
# `make run`: migrate, seed the demo once, print how to use it, then serve HTTP and WebSocket (scripts/serve).
#
# With DATABASE_URL unset every step joins the embedded PostgreSQL under var/pgdata; it stops when
# the last process using it exits, so Ctrl-C (which stops the server) stops the database too.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${PORT:-8000}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
export PYTHONUNBUFFERED=1
export INPROCESS_BEAT="${INPROCESS_BEAT:-1}"  # without Celery, one server process runs the periodic tasks
PY=.venv/bin/python

"$PY" manage.py migrate --noinput
"$PY" manage.py seed_demo --url "http://127.0.0.1:${PORT}/"
echo "Serving on http://127.0.0.1:${PORT}/ (Ctrl-C stops the server and the embedded database)."
PORT="$PORT" exec scripts/serve
