"""The OpenAPI schema's shared parts: the error shape on every operation's 4xx/5xx responses.

drf-spectacular documents what a view returns on success; every API operation can also answer
with the one error shape of apps/core/exceptions.py, and clients (and the fuzz run, `make fuzz`)
hold the service to the statuses listed here. Input serializers refuse unknown keys (400
`unknown_fields`), so their schemas say `additionalProperties: false`, and blank strings where DRF
refuses them (`""` or only whitespace), so those fields say `minLength: 1` and a non-space pattern: a
client generated from the schema, or the fuzz run, does not send a body the API is bound to refuse.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import force_instance
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from apps.core.serializers import StrictSerializer

# Every API operation: bad input, no/invalid key, a key without the scope, anything outside the
# workspace (or a filter naming it), rate limits, the database unreachable.
COMMON_ERRORS = {
    "400": "Invalid input: `code` names the field (`invalid_<field>`) or the problem (`unknown_fields`, ...)",
    "401": "Missing or invalid API key (`not_authenticated`, `invalid_api_key`)",
    "403": "The key's scope does not allow this operation",
    "404": "Not found, or outside the key's workspace (`<thing>_not_found`)",
    "429": "Rate limited (`throttled`); retry after `Retry-After` seconds",
    "503": "A dependency the answer needs is unavailable (`database_unavailable`); retry after `Retry-After` seconds",
}
# Operations with a body besides.
BODY_ERRORS = {
    "409": "Conflicts with the current state (`duplicate_external_id`, ...)",
    "413": "The body or its content is over a limit (`request_too_large`, ...)",
    "415": "The body is not `application/json` (`unsupported_media_type`)",
}


@extend_schema_serializer(component_name="ErrorDetail")
class ErrorDetail(serializers.Serializer):
    code = serializers.CharField(help_text="Stable; clients branch on it")
    message = serializers.CharField(help_text="For humans")
    details = serializers.DictField(help_text="Structured context (fields, limits, ...)")


@extend_schema_serializer(component_name="Error")
class ErrorResponse(serializers.Serializer):
    error = ErrorDetail()


class ApiAutoSchema(AutoSchema):
    """AutoSchema that adds the error responses to every `/api/` operation and closes strict inputs."""

    def _map_serializer(self, serializer: Any, direction: Any, bypass_extensions: bool = False) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer(serializer, direction, bypass_extensions)
        if isinstance(force_instance(serializer), StrictSerializer) and schema.get("type") == "object":
            schema["additionalProperties"] = False
        return schema

    def _map_serializer_field(self, field: Any, direction: Any, bypass_extensions: bool = False) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_serializer_field(field, direction, bypass_extensions)
        if (
            isinstance(field, serializers.CharField)
            and isinstance(field.parent, StrictSerializer)
            and not field.allow_blank
            and schema.get("type") == "string"
            and not {"enum", "format", "pattern"} & set(schema)
        ):
            schema.setdefault("minLength", 1)
            if field.trim_whitespace:  # DRF strips, then refuses what is left blank
                schema["pattern"] = r"\S"
        return schema

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        if direction != "response" or not self.path.startswith("/api/"):
            return responses
        errors = dict(COMMON_ERRORS)
        if self.method in ("POST", "PUT", "PATCH"):
            errors.update(BODY_ERRORS)
        for status, description in errors.items():
            if status not in responses:
                response = self._get_response_for_code(ErrorResponse, status, direction=direction)
                responses[status] = {**response, "description": description}
        return responses
