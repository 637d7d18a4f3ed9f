"""The Celery application; it is used only when REDIS_URL names a broker (see apps/core/background.py)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextarch.settings")

app = Celery("contextarch")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
