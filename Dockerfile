# The web server, Celery worker and beat image (see docker-compose.yml). DATABASE_URL and
# REDIS_URL are expected at run time; the embedded database is for `make run` only.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    OMP_NUM_THREADS=1

# tini as PID 1: it reaps what a crashed server leaves behind (orphaned workers are re-parented to
# PID 1) and passes signals on. scripts/serve supervises the server under it (contextarch/supervise.py).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
COPY clients/python clients/python
RUN pip install -r requirements.txt

COPY . .
# Settings need a secret and a database URL to load; neither is used by collectstatic.
RUN SECRET_KEY=collectstatic DATABASE_URL=postgres://build@localhost/build \
    python manage.py collectstatic --noinput \
 && useradd --create-home --uid 1000 app \
 && mkdir -p var \
 && chown -R app:app /app/var

USER app
EXPOSE 8000
ENV HOST=0.0.0.0 PORT=8000 PYTHON=python
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["scripts/serve"]
