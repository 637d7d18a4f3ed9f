"""OpenAPI links between the API's operations: what a response gives that another operation takes.

A link says "the `id` in POST /items/'s 201 is the `item_id` of GET /items/{item_id}/".
Clients can read them, and `make fuzz` (schemathesis' stateful phase) follows them, so the fuzz run
creates, reads, updates and deletes real things instead of meeting 404s for made-up ids.
`add_links` is a drf-spectacular postprocessing hook; tests/test_schema_links.py holds every link
to an operation that exists, parameters it has and response fields that are there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drf_spectacular.drainage import warn


@dataclass(frozen=True)
class Link:
    """One link: `target` called with `parameters` and body fields taken from `source`'s `status` answer."""

    source: str  # "METHOD /path/" under /api/v1
    status: str
    target: str
    parameters: Mapping[str, str] = field(default_factory=dict)  # target parameter -> runtime expression
    body: Mapping[str, str] = field(default_factory=dict)  # target body field -> runtime expression


def _each(source: str, status: str, targets: list[str], parameter: str, expression: str) -> list[Link]:
    return [Link(source, status, target, {parameter: expression}) for target in targets]


def _into_bodies(source: str, status: str, targets: list[str], name: str, expression: str) -> list[Link]:
    return [Link(source, status, target, body={name: expression}) for target in targets]


PREFIX = "/api/v1"
ID = "$response.body#/id"
NAME = "$response.body#/name"
FIRST_RESULT = "$response.body#/results/0/id"
ON_A_PROPOSAL = ["POST /supersessions/{proposal_id}/accept/", "POST /supersessions/{proposal_id}/reject/"]
# Operations that take a layer in their body: a new layer's id goes there.
LAYER_IN_BODY = [
    "POST /layers/",  # as `parent`: below
    "POST /items/",
    "POST /items/bulk/",
    "POST /strategies/",
    "POST /attempts/",
    "POST /context/",
    "POST /context/preview/",
]
ON_A_LAYER = [
    "GET /layers/{layer_id}/",
    "PATCH /layers/{layer_id}/",
    "GET /layers/{layer_id}/branches/",
    "GET /layers/{layer_id}/communities/",
    "POST /layers/{layer_id}/communities/",
    "GET /layers/{layer_id}/config/",
    "PUT /layers/{layer_id}/config/",
    "GET /layers/{layer_id}/export/",
    "GET /layers/{layer_id}/summaries/",
    "POST /layers/{layer_id}/summarize/",
    "DELETE /layers/{layer_id}/",
]
ON_AN_ITEM = [
    "GET /items/{item_id}/",
    "PATCH /items/{item_id}/",
    "POST /items/{item_id}/importance/",
    "GET /items/{item_id}/thread/",
    "DELETE /items/{item_id}/",
]
ON_A_RELATIONSHIP = ["GET /relationships/{relationship_id}/", "DELETE /relationships/{relationship_id}/"]
ON_A_PATTERN = ["GET /error-patterns/{pattern_id}/", "DELETE /error-patterns/{pattern_id}/"]
ON_A_PROFILE = ["GET /profiles/{name}/", "PUT /profiles/{name}/", "PATCH /profiles/{name}/", "DELETE /profiles/{name}/"]
ON_A_TEMPLATE = ["GET /templates/{name}/", "PUT /templates/{name}/", "DELETE /templates/{name}/"]
ON_AN_UPSTREAM = ["GET /upstreams/{kind}/", "DELETE /upstreams/{kind}/"]
ON_AN_ALLOWLIST_ENTRY = ["GET /redaction/allowlist/{entry_id}/", "DELETE /redaction/allowlist/{entry_id}/"]

LINKS: list[Link] = [
    # The workspace's layers: the first one listed (the company layer of a fresh workspace) is a parent.
    Link("GET /layers/", "200", "POST /layers/", body={"parent": FIRST_RESULT}),
    Link("GET /layers/", "200", "GET /layers/{layer_id}/", {"layer_id": FIRST_RESULT}),
    Link("GET /layers/", "200", "POST /items/", body={"layer": FIRST_RESULT}),
    *_each("POST /layers/", "201", ON_A_LAYER, "layer_id", ID),
    Link("POST /layers/", "201", "POST /layers/", body={"parent": ID}),
    *_into_bodies("POST /layers/", "201", LAYER_IN_BODY[1:], "layer", ID),
    Link("POST /layers/", "201", "GET /items/", {"layer": ID}),
    Link("POST /layers/", "201", "GET /history/", {"layer": ID}),
    Link("POST /layers/", "201", "POST /layers/import/", body={"parent": ID}),
    Link(
        "GET /layers/{layer_id}/export/",
        "200",
        "POST /layers/import/",
        body={"parent": "$request.path.layer_id", "graph": "$response.body"},
    ),
    Link("POST /layers/import/", "201", "GET /layers/{layer_id}/", {"layer_id": "$response.body#/layer"}),
    # Items: one made alone, or two in bulk (a relationship joins them).
    *_each("POST /items/", "201", ON_AN_ITEM, "item_id", ID),
    Link("POST /items/", "201", "POST /relationships/", body={"source": ID}),
    Link("GET /items/", "200", "GET /items/{item_id}/", {"item_id": FIRST_RESULT}),
    *_each("POST /items/bulk/", "201", ON_AN_ITEM, "item_id", "$response.body#/ids/0"),
    Link(
        "POST /items/bulk/",
        "201",
        "POST /relationships/",
        body={"source": "$response.body#/ids/0", "target": "$response.body#/ids/1"},
    ),
    *_each("POST /relationships/", "201", ON_A_RELATIONSHIP, "relationship_id", ID),
    Link("POST /strategies/", "201", "POST /strategies/{strategy_id}/feedback/", {"strategy_id": ID}),
    # An attempt that failed captures an error pattern.
    *_each("POST /attempts/", "201", ON_A_PATTERN, "pattern_id", "$response.body#/pattern"),
    *_each("GET /error-patterns/", "200", ON_A_PATTERN, "pattern_id", FIRST_RESULT),
    # A context's trace, and what the agent used of it.
    Link("POST /context/", "200", "GET /traces/{trace_id}/", {"trace_id": "$response.body#/trace_id"}),
    Link("POST /context/", "200", "POST /consumption/", body={"trace_id": "$response.body#/trace_id"}),
    Link("POST /context/preview/", "200", "GET /traces/{trace_id}/", {"trace_id": "$response.body#/trace_id"}),
    # Named things: profiles, templates (a profile can use one), upstreams.
    *_each("POST /profiles/", "201", ON_A_PROFILE, "name", NAME),
    Link("POST /profiles/", "201", "POST /context/", body={"profile": NAME}),
    *_each("POST /templates/", "201", ON_A_TEMPLATE, "name", NAME),
    Link("POST /templates/", "201", "POST /profiles/", body={"template": NAME}),
    *_each("PUT /upstreams/{kind}/", "200", ON_AN_UPSTREAM, "kind", "$response.body#/kind"),
    *_each("PUT /upstreams/{kind}/", "201", ON_AN_UPSTREAM, "kind", "$response.body#/kind"),
    *_each("POST /redaction/allowlist/", "201", ON_AN_ALLOWLIST_ENTRY, "entry_id", ID),
    # Admin keys: keys and invitations made, then revoked.
    Link("POST /keys/", "201", "POST /keys/{key_id}/revoke/", {"key_id": ID}),
    Link("POST /invitations/", "201", "POST /invitations/{invitation_id}/revoke/", {"invitation_id": ID}),
    Link("POST /erasure/", "201", "GET /erasure/{erasure_id}/", {"erasure_id": ID}),  # the receipt
    # A proposed supersession (a duplicate detector's) is accepted or rejected.
    *_each("GET /supersessions/", "200", ON_A_PROPOSAL, "proposal_id", FIRST_RESULT),
]


def operations_by_route(paths: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The schema's operations by "METHOD /path/" under /api/v1 (operationIds change with the URL prefixes)."""
    return {
        f"{method.upper()} {path.removeprefix(PREFIX)}": operation
        for path, methods in paths.items()
        for method, operation in methods.items()
        if isinstance(operation, dict) and "operationId" in operation
    }


def add_links(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: LINKS into their source responses (a link to nothing warns).

    Each is named after its target's operationId, with the body fields it fills when only they tell
    two links of one response apart.
    """
    operations = operations_by_route(result.get("paths", {}))
    for link in LINKS:
        source, target = operations.get(link.source), operations.get(link.target)
        response = (source or {}).get("responses", {}).get(link.status)
        if target is None or response is None:
            warn(f"OpenAPI link {link.source} {link.status} -> {link.target}: no such operation or response")
            continue
        definition: dict[str, Any] = {"operationId": target["operationId"]}
        if link.parameters:
            definition["parameters"] = dict(link.parameters)
        if link.body:
            definition["requestBody"] = dict(link.body)
        name = target["operationId"] + "".join(f"_{field}" for field in sorted(link.body))
        response.setdefault("links", {})[name] = definition
    return result
