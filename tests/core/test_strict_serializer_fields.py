"""Every input serializer's fields, copied from a per-class template, are the fields DRF would make
(a deepcopy re-running each field's `__init__`), and no copy shares state that a request changes."""

from __future__ import annotations

import copy
from importlib import import_module
from typing import Any

import pytest
from django.apps import apps
from django.utils.module_loading import module_has_submodule
from rest_framework import serializers

from apps.assembly.api import ContextApi
from apps.core.serializers import StrictSerializer, fresh_fields


def _all_input_serializers() -> list[type[StrictSerializer]]:
    for config in apps.get_app_configs():
        for name in ("api", "api_stream", "templates_api"):
            if module_has_submodule(config.module, name):
                import_module(f"{config.name}.{name}")
    found: list[type[StrictSerializer]] = []
    pending = [StrictSerializer]
    while pending:
        cls = pending.pop()
        found += cls.__subclasses__()
        pending += cls.__subclasses__()
    return found


def _plain(value: Any) -> Any:
    """Containers as they are, and anything else as its type and text (lazy messages compare so)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return (type(value), str(value))


def _state(field: serializers.Field) -> dict[str, Any]:
    """A field's attributes, with its child's described the same way and its parent by type only
    (and not the creation counter: it orders a class's declared fields, and each `__init__` counts)."""
    out: dict[str, Any] = {}
    for key, value in vars(field).items():
        if key == "_creation_counter":
            continue
        if key == "parent":
            out[key] = type(value)
        elif key == "child":
            out[key] = (type(value), _state(value))
        elif key == "_validators":  # not all of DRF's validators compare equal by value
            out[key] = [(type(v), _plain(vars(v))) for v in value]
        else:
            out[key] = _plain(value)
    return out


SERIALIZERS = _all_input_serializers()


def test_it_finds_the_input_serializers_of_the_api() -> None:
    assert ContextApi.Input in SERIALIZERS and len(SERIALIZERS) >= 20


@pytest.mark.parametrize("cls", SERIALIZERS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_the_copied_fields_are_the_fields_drf_makes(cls: type[StrictSerializer]) -> None:
    made = copy.deepcopy(cls._declared_fields)  # type: ignore[attr-defined]  # what Serializer.get_fields does
    copied = fresh_fields(cls)
    assert list(copied) == list(made)
    for name, field in copied.items():
        expected = made[name]
        expected.validators, field.validators  # noqa: B018 - built lazily (the plain copies have them already)
        assert type(field) is type(expected)
        assert _state(field) == _state(expected), name


def test_each_copy_has_its_own_binding_and_child() -> None:
    first, second = ContextApi.Input(data={}), ContextApi.Input(data={})
    for name, field in first.fields.items():
        other = second.fields[name]
        assert field is not other and field.parent is first and other.parent is second
        if isinstance(field, serializers.ListField):
            assert field.child is not other.child and field.child.parent is field


def test_a_copy_validates_as_before_with_the_same_errors() -> None:
    bad = ContextApi.Input(data={"kinds": ["memory", "nope"], "query_vector": [0.1, "x"], "iteration": 0})
    assert not bad.is_valid()
    assert set(bad.errors) == {"kinds", "query_vector", "iteration"}
    assert bad.errors["query_vector"] == {1: ["A valid number is required."]}
    good = ContextApi.Input(data={"query": "billing", "kinds": ["memory"], "query_vector": [1, 0.5]})
    assert good.is_valid(), good.errors
    assert good.validated_data["kinds"] == ["memory"] and good.validated_data["query_vector"] == [1.0, 0.5]
