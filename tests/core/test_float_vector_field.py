"""A query vector is checked in one pass when it is a plain list of numbers, and otherwise fails as
before, naming the bad positions."""

from __future__ import annotations

import pytest
from rest_framework import serializers

from apps.core.serializers import FloatVectorField


def _check(value: object) -> object:
    return FloatVectorField(max_length=8).run_validation(value)


def test_it_takes_a_plain_list_of_ints_and_floats_as_floats() -> None:
    assert _check([1, 0.5, -2]) == [1.0, 0.5, -2.0]
    assert all(type(x) is float for x in _check([1, 2]))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "value",
    [[0.1, float("nan")], [0.1, float("inf")], [0.1, True], [0.1, "a"], [0.1, None], [10**400]],
)
def test_it_refuses_what_is_not_a_finite_number_at_its_position(value: list[object]) -> None:
    with pytest.raises(serializers.ValidationError) as refused:
        _check(value)
    assert isinstance(refused.value.detail, dict) and set(refused.value.detail) == {len(value) - 1}


def test_it_still_refuses_a_vector_over_its_length_and_a_non_list() -> None:
    with pytest.raises(serializers.ValidationError):
        _check([0.0] * 9)
    with pytest.raises(serializers.ValidationError):
        _check("0.1,0.2")
