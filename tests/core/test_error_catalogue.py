"""The error catalogue (apps/core/error_catalogue.py): every code a client can meet is named once, with its
status and message; no raise spells a code as a string; every input field maps to its validation code;
and the schema lists each operation's codes, held to what the operation's code path names."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from apps.core.error_catalogue import CATALOGUE, FIELD_CODES, OPERATION_CODES, ErrorCode, catalogue_load
from apps.core.errors import DomainError
from apps.core.schema import operation_error_codes
from tests.support.tenants import make_tenant

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "apps"


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(APPS.rglob("*.py")):
        if "migrations" not in path.parts:
            found.append((str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))))
    return found


def _spelled(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def spelled_codes() -> list[str]:
    """Places that spell an error code as a string instead of naming it from a catalogue: `code="..."`
    or `code=f"..."` in a call, `code = "..."` in a class, `error_body("...", ...)`, `.code == "..."`."""
    found = []
    for where, tree in _modules():
        if where.startswith("apps/mcp_server/"):  # the MCP tools' own protocol errors, not the API's
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = ast.unparse(node.func)
                if name.endswith("has_error"):  # Django's form error codes
                    continue
                if any(k.arg == "code" and _spelled(k.value) for k in node.keywords):
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)[:80]}")
                if name.endswith("error_body") and node.args and _spelled(node.args[0]):
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)[:80]}")
            elif isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if (
                        isinstance(statement, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "code" for t in statement.targets)
                        and _spelled(statement.value)
                        and where != "apps/bench/assembly/clients.py"  # a benchmark's HTTP status column
                    ):
                        found.append(f"{where}:{statement.lineno} {node.name}.code")
            elif isinstance(node, ast.Compare) and ast.unparse(node.left).endswith(".code"):
                if any(_spelled(c) for c in node.comparators):
                    found.append(f"{where}:{node.lineno} {ast.unparse(node)[:80]}")
    return found


def test_no_code_is_spelled_as_a_string_outside_the_catalogues() -> None:
    assert spelled_codes() == []


def test_the_check_sees_spelled_codes(tmp_path: Path) -> None:
    tree = ast.parse(
        'raise NotFound("gone", code="layer_not_found")\n'
        'class X(InvalidInput):\n    code = "x_bad"\n'
        'error_body("nope", "message")\n'
        'if exc.code == "duplicate_profile": pass\n'
        "raise NotFound(code=LAYER_NOT_FOUND)\n"
    )
    names = [
        n
        for n in ast.walk(tree)
        if (isinstance(n, ast.Call) and any(k.arg == "code" and _spelled(k.value) for k in n.keywords))
        or (isinstance(n, ast.Assign) and _spelled(n.value))
        or (isinstance(n, ast.Call) and ast.unparse(n.func) == "error_body" and _spelled(n.args[0]))
        or (isinstance(n, ast.Compare) and any(_spelled(c) for c in n.comparators))
    ]
    assert len(names) == 4


def _codes_named_at_raise_sites() -> list[tuple[str, type, ErrorCode]]:
    """(where, exception class, code) of every `SomeError(..., code=NAME)` in apps/, resolved by importing
    the module: the class's status is the answer's, so the catalogue entry must say the same."""
    found = []
    for where, tree in _modules():
        module = importlib.import_module(where.removesuffix(".py").replace("/", "."))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            named = next((k.value for k in node.keywords if k.arg == "code"), None)
            if named is None or not isinstance(named, (ast.Name, ast.Attribute)):
                continue
            target = _resolve(named, vars(module))
            raised = _resolve(node.func, vars(module))
            if isinstance(target, ErrorCode) and isinstance(raised, type) and issubclass(raised, DomainError):
                found.append((f"{where}:{node.lineno}", raised, target))
    return found


def test_every_code_named_at_a_raise_is_catalogued_with_the_status_it_answers() -> None:
    catalogue_load()
    sites = _codes_named_at_raise_sites()
    assert len(sites) > 150
    assert [w for w, _, code in sites if CATALOGUE.get(code.code) is not code] == []
    assert [(w, cls.status, code) for w, cls, code in sites if cls.status not in {code.status, *code.also}] == []


def test_every_exception_class_code_is_catalogued_with_its_status() -> None:
    catalogue_load()
    classes: list[type[DomainError]] = []
    pending = [DomainError]
    while pending:
        cls = pending.pop()
        classes.append(cls)
        pending += cls.__subclasses__()
    wrong = [
        (cls.__qualname__, cls.code, cls.status)
        for cls in classes
        if cls.__module__.startswith("apps.")
        and (cls.code not in CATALOGUE or cls.status not in {CATALOGUE[cls.code].status, *CATALOGUE[cls.code].also})
    ]
    assert wrong == []


def test_a_code_is_catalogued_once_with_a_message() -> None:
    catalogue_load()
    assert all(code == entry.code and entry.message and 400 <= entry.status < 600 for code, entry in CATALOGUE.items())
    assert len(CATALOGUE) > 150


@functools.cache
def _schema() -> dict[str, Any]:
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, operations in _schema()["paths"].items()
        if path.startswith("/api/")
        for method, operation in operations.items()
    ]


def test_every_input_field_of_the_api_maps_to_a_validation_code() -> None:
    """Renaming a field keeps its public code: the new name is mapped to the old code, never derived."""
    components = _schema()["components"]["schemas"]
    from apps.core.schema import _input_fields

    fields = set().union(*(_input_fields(op, components) for _, _, op in _operations()))
    assert sorted(fields - set(FIELD_CODES)) == []


@pytest.mark.django_db
def test_a_validation_error_answers_with_the_code_mapped_to_its_field() -> None:
    tenant = make_tenant("catalogue")
    answer = Client().post(
        "/api/v1/context/",
        {"layer": tenant.root.pk, "query": "anything", "token_budget": -1},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {tenant.secret}",
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == FIELD_CODES["token_budget"].code == "invalid_token_budget"


def test_the_schema_lists_each_operations_codes_by_status() -> None:
    components = _schema()["components"]["schemas"]
    for path, method, operation in _operations():
        listed = {
            code
            for status, response in operation["responses"].items()
            if status >= "400"
            for code in response["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"][
                "properties"
            ]["code"]["enum"]
        }
        expected = {code.code for code in operation_error_codes(operation, method, components)}
        assert listed == expected, (method, path)
    layer_create = _schema()["paths"]["/api/v1/layers/"]["post"]["responses"]
    assert (
        "company_exists"
        in layer_create["400"]["content"]["application/json"]["schema"]["allOf"][1]["properties"]["error"][
            "properties"
        ]["code"]["enum"]
    )


def test_every_api_operation_declares_its_codes() -> None:
    catalogue_load()
    operations = {operation["operationId"] for _, _, operation in _operations()}
    assert sorted(operations - set(OPERATION_CODES)) == []
    assert sorted(set(OPERATION_CODES) - operations) == []
    assert [op for op, codes in OPERATION_CODES.items() if any(CATALOGUE.get(c.code) is not c for c in codes)] == []


# --- What an operation's code path names, read from the source -----------------------------------------
def _resolve(node: ast.AST, scope: dict[str, Any]) -> Any:
    """The object a dotted name (`x`, `x.y.z`) stands for in `scope`, or None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in scope:
        return None
    found = scope[node.id]
    for name in reversed(names):
        try:
            found = inspect.getattr_static(found, name)
        except AttributeError:
            return None
        if isinstance(found, (staticmethod, classmethod)):
            found = found.__func__
    return found


def _parameter_types(function: Any) -> dict[str, type]:
    """The parameters annotated with a class of apps/ (`layers: LayerSnapshot`, `x: Foo | None`), so a
    method called on one (`layers.get(...)`) is followed too."""
    found = {}
    for name, annotation in inspect.get_annotations(function).items():
        if isinstance(annotation, str):
            try:
                annotation = eval(annotation, function.__globals__)
            except Exception:  # noqa: BLE001 - a name imported only for type checking
                continue
        for candidate in typing.get_args(annotation) or (annotation,):
            if isinstance(candidate, type) and _ours(candidate):
                found[name] = candidate
                break
    return found


def _ours(obj: Any) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith("apps.")


@functools.cache
def _tree(function: types.FunctionType) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return None


def codes_raised(function: Any, owner: type | None = None) -> set[str]:
    """The codes `function` (a method of `owner`, if any) and what it calls can raise."""
    found: set[str] = set()
    seen: set[Any] = set()

    def visit_class(cls: type) -> None:
        if cls in seen or not _ours(cls):
            return
        seen.add(cls)
        if issubclass(cls, serializers.BaseSerializer):  # its validators run inside is_valid()
            for name, member in vars(cls).items():
                if isinstance(member, type):
                    visit_class(member)
                elif inspect.isfunction(member) and (name.startswith("validate") or name in ("to_internal_value",)):
                    visit_function(member, cls)

    def visit_function(function: Any, owner: type | None) -> None:
        function = inspect.unwrap(function)
        if function in seen or not _ours(function):
            return
        seen.add(function)
        tree = _tree(function)
        if tree is None:
            return
        scope = {**vars(inspect.getmodule(function) or object()), **_parameter_types(function)}
        scope.update({"self": owner, "cls": owner} if owner else {})
        scope.update(inspect.getclosurevars(function).nonlocals)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and not any(keyword.arg == "code" for keyword in node.keywords):
                raised = _resolve(node.func, scope)  # an exception raised with its class's own code
                if isinstance(raised, type) and issubclass(raised, DomainError):
                    found.add(raised.code)
            if not isinstance(node, (ast.Name, ast.Attribute)):
                continue
            target = _resolve(node, scope)
            if isinstance(target, ErrorCode):
                found.add(target.code)
            elif isinstance(target, type):
                visit_class(target)
            elif inspect.isfunction(target):
                holder = owner if owner is not None and getattr(owner, target.__name__, None) is target else None
                if holder is None and "." in target.__qualname__ and "<locals>" not in target.__qualname__:
                    holder = getattr(inspect.getmodule(target), target.__qualname__.split(".")[0], None)
                visit_function(target, holder if isinstance(holder, type) else None)

    visit_function(function, owner)
    return found


def _view_operations() -> list[tuple[str, type, str]]:
    generator = SchemaGenerator()
    generator._initialise_endpoints()
    ids = {(path, method): op["operationId"] for path, ops in _schema()["paths"].items() for method, op in ops.items()}
    return [
        (ids[(path, method.lower())], callback.cls, method.lower())
        for path, _, method, callback in generator.endpoints
        if path.startswith("/api/") and (path, method.lower()) in ids
    ]


def test_each_operation_declares_every_code_its_code_path_names() -> None:
    """Followed from the view's method through the functions, classes and serializers of `apps/` it names
    (calls on objects the source does not type are not followed: the declaration may list more)."""
    catalogue_load()
    missing = {}
    for operation, view, method in _view_operations():
        named = codes_raised(getattr(view, method), view)
        declared = {code.code for code in OPERATION_CODES.get(operation, ())}
        if named - declared:
            missing[operation] = sorted(named - declared)
    assert missing == {}


def test_the_reading_follows_calls_into_services() -> None:
    from apps.layers.api import LayerDetailApi

    assert {"layer_not_found", "cannot_delete_root"} <= codes_raised(LayerDetailApi.delete, LayerDetailApi)
