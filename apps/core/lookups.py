"""`field__any=[...]`: `field = ANY(%s)` with the whole list as one array parameter.

Django's `__in` writes one placeholder per value; with the hundreds of layer ids of a big scope or
the candidate ids of an assembly, building, escaping and parsing those placeholders cost more
than running the query. PostgreSQL plans `= ANY(array)` like `IN (...)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import Field, ForeignObject, Lookup


@ForeignObject.register_lookup  # foreign keys keep their own lookup registry
@Field.register_lookup
class AnyOf(Lookup):
    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self) -> Any:
        values = self.rhs
        if not isinstance(values, Iterable) or isinstance(values, (str, bytes)):
            raise TypeError("__any takes a list of values")
        return [self.lhs.output_field.get_prep_value(v) for v in values]

    def get_db_prep_lookup(self, value: Any, connection: Any) -> tuple[str, list[Any]]:
        return "%s", [value]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        rhs, rhs_params = self.process_rhs(compiler, connection)
        return f"{lhs} = ANY({rhs})", [*lhs_params, *rhs_params]
