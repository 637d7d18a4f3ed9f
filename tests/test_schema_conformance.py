"""Real responses of a live server conform to the OpenAPI schema it serves: success bodies (paginated
lists included) and every error status with the error shape, checked by schemathesis' validator."""

from __future__ import annotations

from typing import Any

import pytest
import requests
import schemathesis
from schemathesis.core.failures import Failure, FailureGroup

from tests.support.tenants import make_tenant

pytestmark = pytest.mark.django_db(transaction=True)


class Conformance:
    """Sends requests to the live server and validates each answer against its operation's schema."""

    def __init__(self, base: str, secret: str) -> None:
        self.base = base
        self.schema = schemathesis.openapi.from_url(f"{base}/api/schema/?format=json")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {secret}"

    def check(self, method: str, template: str, status: int, path: str = "", **kwargs: Any) -> Any:
        response = self.session.request(method, self.base + (path or template), timeout=60, **kwargs)
        assert response.status_code == status, (method, path or template, response.text[:500])
        operation = self.schema[template][method]
        assert str(status) in operation.definition.raw["responses"], f"{status} undocumented for {method} {template}"
        operation.validate_response(response)
        return response.json() if response.content else None


def test_real_responses_conform_to_the_schema(uvicorn_live: str) -> None:
    tenant = make_tenant("conform")
    api = Conformance(uvicorn_live, tenant.secret)
    root = tenant.root.pk

    page = api.check("GET", "/api/v1/layers/", 200)
    assert set(page) == {"count", "next", "previous", "results"}
    project = api.check(
        "POST", "/api/v1/layers/", 201, json={"kind": "project", "name": "P", "parent": root, "external_id": "p-1"}
    )
    api.check(
        "POST", "/api/v1/layers/", 409, json={"kind": "project", "name": "Q", "parent": root, "external_id": "p-1"}
    )
    api.check("POST", "/api/v1/layers/", 400, json={"kind": "project", "name": "Q", "parent": root, "colour": "red"})
    api.check("POST", "/api/v1/layers/", 400, data=b'{"name": NaN}', headers={"Content-Type": "application/json"})
    api.check(
        "POST", "/api/v1/layers/", 415, data=b"name=x", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    api.check("GET", "/api/v1/layers/{layer_id}/", 200, path=f"/api/v1/layers/{project['id']}/")
    api.check("GET", "/api/v1/layers/{layer_id}/", 404, path="/api/v1/layers/999999999/")
    api.check("GET", "/api/v1/layers/", 400, path="/api/v1/layers/?kind=a%00b")
    api.check("GET", "/api/v1/layers/", 404, path="/api/v1/layers/?parent=999999999")

    item = {"layer": project["id"], "kind": "memory", "type": "fact", "content": "Backups are kept for 35 days."}
    api.check("POST", "/api/v1/items/", 201, json=item)
    api.check("GET", "/api/v1/items/", 200, path=f"/api/v1/items/?layer={project['id']}")
    api.check("POST", "/api/v1/strategies/", 201, json={"layer": root, "content": "Retry with backoff."})
    api.check("POST", "/api/v1/strategies/", 400, json={"layer": root, "content": "x", "helpfulness": "NaN"})
    api.check("GET", "/api/v1/strategies/", 200)
    api.check("POST", "/api/v1/context/", 200, json={"layer": project["id"], "query": "How long are backups kept?"})
    api.check("POST", "/api/v1/context/", 400, json={"layer": project["id"], "query_vector": [0.0] * 384})
    api.check("POST", "/api/v1/context/", 404, json={"layer": 999999999, "query": "x"})
    api.check("GET", "/api/v1/profiles/", 200)
    api.check("GET", "/api/v1/error-patterns/", 200)
    api.check("POST", "/api/v1/error-patterns/match/", 200, json={"error": "TypeError: x is undefined"})
    api.check("GET", "/api/v1/status/", 200)
    api.check("POST", "/api/v1/tokens/", 200, json={"model": "claude-sonnet-4-5", "text": "How long are backups kept?"})
    chat = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    api.check("POST", "/api/v1/tokens/", 200, json={"model": "llama-3.1-8b", "messages": chat, "tools": [{"x": 1}]})
    api.check("POST", "/api/v1/tokens/", 400, json={"model": "gpt-4o"})
    api.check("POST", "/api/v1/tokens/", 413, json={"text": "x" * 200_001})
    api.check("GET", "/api/v1/keys/", 403)  # a read+write key does not manage keys
    api.session.headers["Authorization"] = "Bearer ca_not_a_key"
    api.check("GET", "/api/v1/layers/", 401)


def test_the_validator_catches_a_body_that_breaks_the_schema(uvicorn_live: str) -> None:
    """The check above can fail: a list answered as a plain array (the old schema's shape) is refused."""
    tenant = make_tenant("conform-neg")
    api = Conformance(uvicorn_live, tenant.secret)
    response = api.session.get(f"{uvicorn_live}/api/v1/layers/", timeout=60)
    response._content = b'[{"id": 1}]'
    with pytest.raises((Failure, FailureGroup)):
        api.schema["/api/v1/layers/"]["GET"].validate_response(response)
    response.status_code, response._content = 400, b'{"detail": "bad"}'
    with pytest.raises((Failure, FailureGroup)):
        api.schema["/api/v1/layers/"]["GET"].validate_response(response)
