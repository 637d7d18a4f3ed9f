"""Where the service is and which key to send: arguments, else CONTEXTARCH_URL and CONTEXTARCH_API_KEY."""

from __future__ import annotations

import os
from dataclasses import dataclass

from contextarch_client.errors import ContextArchError

URL_ENV = "CONTEXTARCH_URL"
KEY_ENV = "CONTEXTARCH_API_KEY"
USER_AGENT = "contextarch-client/0.1.0"


@dataclass(frozen=True)
class Config:
    base_url: str
    api_key: str

    @classmethod
    def resolve(cls, base_url: str | None, api_key: str | None) -> Config:
        url = base_url or os.environ.get(URL_ENV, "")
        key = api_key or os.environ.get(KEY_ENV, "")
        if not url:
            raise ContextArchError(f"give base_url or set {URL_ENV}", code="missing_base_url")
        if not key:
            raise ContextArchError(f"give api_key or set {KEY_ENV}", code="missing_api_key")
        return cls(base_url=url.rstrip("/"), api_key=key)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}", "Accept": "application/json", "User-Agent": USER_AGENT}
