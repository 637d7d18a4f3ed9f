"""An assembly run for its trace, for the console's trace pages."""

from __future__ import annotations

from apps.assembly.params import ContextParams
from apps.assembly.services import context_assemble
from apps.layers.models import Layer
from tests.support.tenants import Tenant


def assemble(tenant: Tenant, layer: Layer, query: str, **params: object) -> str:
    result = context_assemble(
        workspace=tenant.workspace,
        params=ContextParams(layer_id=layer.pk, query=query, **{"timeout_ms": 0, **params}),  # type: ignore[arg-type]
    )
    return result.trace_id
