"""The client's typed results have the shapes of the API: field names and required-ness, model by model.

The shapes are read from the OpenAPI schema generated now (the same as `/api/schema/`). Where the
schema still leaves an answer untyped (a free-form object), the model is held to a real answer
of the API instead, so no model goes unchecked whichever way the schema moves.
"""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from pydantic import BaseModel

from apps.core import background
from apps.layers.services import ItemInput, items_create, layer_create
from contextarch_client import models
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db(transaction=True)
OPERATION_MODELS = [m for m in vars(models).values() if isinstance(m, type) and getattr(m, "operation", None)]


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    """The model inside `Model`, `list[Model]` or `Model | None`, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) in (list, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _nested_model(arg)
            if found:
                return found
    return None


class Shapes:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        """Follow $ref, allOf of one, array items and a paginated `results` down to an object schema."""
        while True:
            if "$ref" in node:
                node = self.schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
            elif "allOf" in node and len(node["allOf"]) == 1:
                node = node["allOf"][0]
            elif node.get("type") == "array":
                node = node["items"]
            elif set(node.get("properties", {})) >= {"count", "next", "previous", "results"}:
                node = node["properties"]["results"]
            else:
                return node

    def response(self, method: str, path: str, status: str) -> dict[str, Any]:
        operation = self.schema["paths"][path][method]
        return self.resolve(operation["responses"][status]["content"]["application/json"]["schema"])

    def mismatches(self, model: type[BaseModel], node: dict[str, Any], where: str) -> list[str]:
        props, required = node.get("properties", {}), set(node.get("required", []))
        fields = model.model_fields
        found = []
        if set(fields) != set(props):
            found.append(
                f"{where}: client {sorted(set(fields) - set(props))} vs schema {sorted(set(props) - set(fields))}"
            )
        for name in set(fields) & set(props):
            if fields[name].is_required() != (name in required):
                found.append(
                    f"{where}.{name}: required in client {fields[name].is_required()}, in schema {name in required}"
                )
            nested = _nested_model(fields[name].annotation)
            if nested is not None:
                found += self.mismatches(nested, self.resolve(props[name]), f"{where}.{name}")
        return found


def _typed(node: dict[str, Any]) -> bool:
    return bool(node.get("properties"))


def _answer_mismatches(model: type[BaseModel], answer: Any, where: str) -> list[str]:
    """A model against a real answer: the same keys; nested models against their first element."""
    if isinstance(answer, list):
        return _answer_mismatches(model, answer[0], where) if answer else []
    fields = set(model.model_fields)
    if fields != set(answer):
        return [f"{where}: client {sorted(fields - set(answer))} vs answer {sorted(set(answer) - fields)}"]
    found = []
    for name, info in model.model_fields.items():
        nested = _nested_model(info.annotation)
        if nested is not None and answer[name] is not None:
            found += _answer_mismatches(nested, answer[name], f"{where}.{name}")
    return found


@pytest.fixture
def answers(tenant: Tenant) -> dict[tuple[str, str, str], Any]:
    """Real answers of the operations the schema may leave untyped, keyed like `Model.operation`."""
    session = layer_create(workspace=tenant.workspace, kind="session", name="s", parent=tenant.root)
    items_create(layer=session, items=[ItemInput(kind="message", role="user", content="Backups are kept 35 days.")])
    assert background.wait_idle(120)
    client = tenant.client
    context = client.post("/api/v1/context/", {"layer": session.pk, "query": "backups"}, format="json").json()
    out = {
        ("post", "/api/v1/context/", "200"): context,
        ("get", "/api/v1/traces/{trace_id}/", "200"): client.get(f"/api/v1/traces/{context['trace_id']}/").json(),
        ("get", "/api/v1/status/", "200"): client.get("/api/v1/status/").json(),
        ("get", "/api/v1/history/", "200"): client.get(
            "/api/v1/history/", {"query": "backups", "layer": session.pk}
        ).json(),
    }
    return out


def test_every_client_model_has_the_shape_of_its_operations_answer(answers: dict[tuple[str, str, str], Any]) -> None:
    shapes = Shapes(SchemaGenerator().get_schema(request=None, public=True))
    assert len(OPERATION_MODELS) >= 10
    problems: list[str] = []
    for model in OPERATION_MODELS:
        node = shapes.response(*model.operation)
        if _typed(node):
            problems += shapes.mismatches(model, node, model.__name__)
        else:
            assert model.operation in answers, f"{model.__name__}: untyped in the schema and no real answer to compare"
            problems += _answer_mismatches(model, answers[model.operation], model.__name__)
    assert not problems, "\n".join(problems)


def test_pages_and_the_error_envelope_have_the_schemas_shapes() -> None:
    shapes = Shapes(SchemaGenerator().get_schema(request=None, public=True))
    problems: list[str] = []
    for (method, path, status), row in models.PAGED_OPERATIONS.items():
        content = shapes.schema["paths"][path][method]["responses"][status]["content"]["application/json"]
        wrapper = content["schema"]
        page = (
            shapes.schema["components"]["schemas"][wrapper["$ref"].rsplit("/", 1)[-1]] if "$ref" in wrapper else wrapper
        )
        problems += shapes.mismatches(models.Page[row], page, f"Page[{row.__name__}] of {path}")  # type: ignore[valid-type]
    error = shapes.schema["components"]["schemas"]["Error"]
    problems += shapes.mismatches(models.ErrorBody, error, "ErrorBody")
    assert not problems, "\n".join(problems)


def test_the_check_notices_a_field_the_api_does_not_have() -> None:
    shapes = Shapes(SchemaGenerator().get_schema(request=None, public=True))

    class Drifted(models.Layer):
        renamed_field: int

    assert shapes.mismatches(Drifted, shapes.response(*models.Layer.operation), "Drifted") == [
        "Drifted: client ['renamed_field'] vs schema []"
    ]


def test_the_context_call_takes_every_parameter_the_api_takes() -> None:
    from apps.assembly.api import ContextApi
    from contextarch_client.params import ContextParams

    assert set(ContextParams.__annotations__) == set(ContextApi.Input().fields)
