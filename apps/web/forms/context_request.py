"""The pages' context requests go through the API's one door.

A form that runs a context builds the body of `POST /api/v1/context/` from its values, and the API's
serializer validates it (`apps.assembly.streaming.context_params`), so a value the API refuses the page
refuses with the API's message and code, on the field it names; the checks are written once, there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import forms
from rest_framework import serializers

from apps.assembly.params import ContextParams
from apps.assembly.streaming import context_params
from apps.core.exceptions import validation_error_body


def request_body(values: Mapping[str, Any]) -> dict[str, Any]:
    """The API's body for the form's values: empty ones left out, so they take the API's defaults."""
    return {name: value for name, value in values.items() if value not in (None, "", [], ())}


def form_params(form: forms.Form, body: Mapping[str, Any]) -> ContextParams | None:
    """`body` validated as the API validates it; None, with the API's error on `form`, when it refuses."""
    try:
        return context_params(request=request_body(body))
    except serializers.ValidationError as exc:
        error = validation_error_body(exc.detail)["error"]
        field = next(iter(exc.detail), None) if isinstance(exc.detail, dict) else None
        form.add_error(field if field in form.fields else None, f"{error['message']} ({error['code']})")
        return None
