"""The SQL vector search sends (apps/layers/vectors.py, apps/layers/filters.py): exact literals, one index scan."""

from __future__ import annotations

from apps.layers.filters import ItemFilters, id_array


def test_id_arrays_are_one_array_literal() -> None:
    assert id_array([3, 1, 2]) == "{3,1,2}"
    assert id_array([]) == "{}"
    assert ItemFilters(workspace_id=1, layer_ids=(7, 8)).sql() == (
        ["workspace_id = %s", "layer_id = ANY(%s::bigint[])"],
        [1, "{7,8}"],
    )
