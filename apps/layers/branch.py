"""The walk of a conversation's branch, as raw SQL on this app's item table (assembly runs it).

From a message (or the newest of the given layers) back along parent links; a message written
without a parent continues with the turn said just before it in those layers. One recursive
statement of at most `size` index lookups.
"""

from __future__ import annotations


def branch_sql(*, columns: str, layers: int, from_newest: bool) -> str:
    """The statement selecting `columns` (of `layers_item i`) along the branch, nearest first.

    Parameters, in order: the start (`from_newest`: the workspace and the `layers` layer ids;
    else the message id), the workspace and the layer ids again, the walk's size, the workspace.
    """
    placeholders = ", ".join(["%s"] * layers)
    in_window = f"p.workspace_id = %s AND p.layer_id IN ({placeholders}) AND p.kind = 'message'"
    first = (
        f"SELECT p.id FROM layers_item p WHERE {in_window} ORDER BY p.created_at DESC, p.id DESC LIMIT 1"
        if from_newest
        else "SELECT %s::bigint"
    )
    return (
        f"WITH RECURSIVE path(id, step) AS (SELECT ({first}), 0 "
        "UNION ALL SELECT COALESCE(i.parent_id, "
        f"(SELECT p.id FROM layers_item p WHERE {in_window} AND (p.created_at, p.id) < (i.created_at, i.id) "
        "ORDER BY p.created_at DESC, p.id DESC LIMIT 1)), path.step + 1 "
        "FROM path JOIN layers_item i ON i.id = path.id WHERE path.step + 1 < %s) "
        f"SELECT {columns} FROM path JOIN layers_item i ON i.id = path.id "
        "WHERE i.workspace_id = %s AND i.kind = 'message' ORDER BY path.step"
    )
