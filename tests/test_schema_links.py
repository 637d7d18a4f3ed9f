"""The schema's OpenAPI links resolve: each names an operation that exists, parameters it takes and
body fields it reads, and takes its values from fields the source response has. A renamed field,
parameter or operation breaks a test here instead of quietly stopping `make fuzz` at 404s."""

from __future__ import annotations

import re
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator

from contextarch.schema_links import LINKS

METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    generated: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    return generated


def operations(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for methods in schema["paths"].values() for m, op in methods.items() if m in METHODS}


def resolved(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The node with its $ref, and a single allOf (drf-spectacular's way to mark a ref nullable), followed."""
    while True:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
        elif len(node.get("allOf", [])) == 1:
            node = node["allOf"][0]
        else:
            return node


def pointed(schema: dict[str, Any], node: dict[str, Any], pointer: str) -> dict[str, Any] | None:
    """The sub-schema a JSON pointer into a response body reaches, or None where the schema has no such field."""
    for part in [p for p in pointer.split("/") if p]:
        node = resolved(schema, node)
        if part.isdigit() and node.get("type") == "array":
            node = node["items"]
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            return None
    return resolved(schema, node)


def links(schema: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        (op["operationId"], status, name, link)
        for op in operations(schema).values()
        for status, response in op["responses"].items()
        for name, link in response.get("links", {}).items()
    ]


def test_every_declared_link_is_in_the_schema(schema: dict[str, Any]) -> None:
    assert len(links(schema)) == len(LINKS) > 50


def test_each_link_names_an_operation_and_parameters_that_exist(schema: dict[str, Any]) -> None:
    ops = operations(schema)
    for source, _status, name, link in links(schema):
        target = ops.get(link["operationId"])
        assert target is not None, (source, name)
        taken = {parameter["name"] for parameter in target.get("parameters", [])}
        assert set(link.get("parameters", {})) <= taken, (source, name, taken)
        required = {p["name"] for p in target.get("parameters", []) if p["in"] == "path"}
        assert required <= set(link.get("parameters", {})), (source, name, required)
        if "requestBody" in link:
            body = resolved(schema, target["requestBody"]["content"]["application/json"]["schema"])
            assert set(link["requestBody"]) <= set(body["properties"]), (source, name)


def test_each_link_takes_its_values_from_fields_the_source_answers_with(schema: dict[str, Any]) -> None:
    ops = operations(schema)
    for source, status, name, link in links(schema):
        operation = ops[source]
        body = operation["responses"][status]["content"]["application/json"]["schema"]
        expressions = [*link.get("parameters", {}).values(), *link.get("requestBody", {}).values()]
        for expression in expressions:
            if expression.startswith("$request.path."):
                taken = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
                assert expression.removeprefix("$request.path.") in taken, (source, name, expression)
                continue
            found = re.fullmatch(r"\$response\.body(?:#(/.*))?", expression)
            assert found, (source, name, expression)
            assert pointed(schema, body, found.group(1) or "") is not None, (source, name, expression)


def test_every_operation_on_one_thing_is_the_target_of_a_link(schema: dict[str, Any]) -> None:
    """A new `/things/{thing_id}/` operation needs a link from what makes the thing, or the fuzz never reaches it
    (a path parameter with an enum, as an upstream's `kind`, is known up front)."""
    targeted = {link["operationId"] for _, _, _, link in links(schema)}
    with_path_parameters = {
        op["operationId"]
        for op in operations(schema).values()
        if any(p["in"] == "path" and "enum" not in resolved(schema, p["schema"]) for p in op.get("parameters", []))
    }
    assert with_path_parameters - targeted == set()
