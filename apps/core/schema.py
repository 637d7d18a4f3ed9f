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

from apps.core import errors
from apps.core.error_catalogue import COMMON_CODES, FIELD_CODES, OPERATION_CODES, ErrorCode, catalogue_load
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


def _input_fields(operation: dict[str, Any], components: dict[str, Any]) -> set[str]:
    """The top-level body keys and query parameters an operation takes."""
    fields = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
    for content in operation.get("requestBody", {}).get("content", {}).values():
        body = content.get("schema", {})
        if "$ref" in body:
            body = components.get(body["$ref"].rsplit("/", 1)[-1], {})
        fields |= set(body.get("properties", {}))
    return fields


def operation_error_codes(operation: dict[str, Any], method: str, components: dict[str, Any]) -> list[ErrorCode]:
    """Every code an operation can answer with: those of every operation (and of its method), its input
    fields' (apps/core/field_errors.py) and those its app declares for it (`operation_codes`)."""
    codes = [*COMMON_CODES.get("*", []), *COMMON_CODES.get(method.upper(), [])]
    codes += [FIELD_CODES[field] for field in sorted(_input_fields(operation, components)) if field in FIELD_CODES]
    codes += OPERATION_CODES.get(operation.get("operationId", ""), ())
    return list(dict.fromkeys(codes))


def add_error_codes(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Postprocessing hook: each `/api/` operation's error responses list the codes it can answer with, as
    an enum of `error.code` per status (the catalogue: apps/core/error_catalogue.py)."""
    catalogue_load()
    components = result.get("components", {}).get("schemas", {})
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            by_status: dict[str, list[str]] = {}
            for code in operation_error_codes(operation, method, components):
                for status in sorted({code.status, *(code.also if code is errors.OVERLOADED else ())}):
                    by_status.setdefault(str(status), []).append(code.code)
            for status in [s for s in operation["responses"] if s >= "400" and s not in by_status]:
                del operation["responses"][status]  # a generic error status no code of this operation has
            for status, names in sorted(by_status.items()):
                response = operation["responses"].setdefault(status, {"description": "See `error.code`"})
                code_enum = {"type": "string", "enum": sorted(names)}
                response["content"] = {
                    "application/json": {
                        "schema": {
                            "allOf": [
                                {"$ref": "#/components/schemas/Error"},
                                {"type": "object", "properties": {"error": {"properties": {"code": code_enum}}}},
                            ]
                        }
                    }
                }
    return result
