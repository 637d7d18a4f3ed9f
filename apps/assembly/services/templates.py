"""A workspace's own chunk templates: the one validator and the writes, for the API and the pages alike."""

from __future__ import annotations

import re

from django.db import IntegrityError, transaction

from apps.assembly.errors import DUPLICATE_TEMPLATE
from apps.assembly.models import OutputTemplate
from apps.core.errors import Conflict, DomainError, InvalidInput
from apps.core.field_errors import INVALID_BY_TYPE, INVALID_NAME, INVALID_TEMPLATE
from apps.engine import BUILTIN_TEMPLATES, TemplateError
from apps.engine.format import check_template
from apps.workspaces import audit
from apps.workspaces.models import AuditTarget, Workspace

NAME_PATTERN = r"^[A-Za-z0-9_.-]{1,100}$"
MAX_BODY_CHARS = 5000
MAX_TYPE_BODIES = 50
MAX_TYPE_NAME = 100


def template_errors(*, name: str, body: str, by_type: dict[str, str]) -> dict[str, DomainError]:
    """Every reason these fields are not a valid template, by field ({} when fine).

    The API answers with the first (`invalid_name`, `invalid_template`, `invalid_by_type`); the
    templates page shows them all at once. A per-type body's error is keyed `by_type:<type>`.
    """
    errors: dict[str, DomainError] = {}
    if not re.fullmatch(NAME_PATTERN, name):
        errors["name"] = InvalidInput("name must be 1-100 characters of A-Z a-z 0-9 _ . -", code=INVALID_NAME)
    elif name in BUILTIN_TEMPLATES:
        errors["name"] = InvalidInput(f"{name!r} is a built-in template", code=INVALID_NAME)
    problem = _body_error(body)
    if problem:
        errors["body"] = problem
    if len(by_type) > MAX_TYPE_BODIES:
        errors["by_type"] = InvalidInput(f"at most {MAX_TYPE_BODIES} type bodies", code=INVALID_BY_TYPE)
    for kind, text in by_type.items():
        if not kind.strip() or len(kind) > MAX_TYPE_NAME:
            message = f"a type is 1-{MAX_TYPE_NAME} characters"
            errors[f"by_type:{kind}"] = InvalidInput(message, code=INVALID_BY_TYPE)
        elif problem := _body_error(text):
            errors[f"by_type:{kind}"] = problem
    return errors


def _body_error(text: str) -> DomainError | None:
    if not text.strip():
        return InvalidInput("a template body must not be empty", code=INVALID_TEMPLATE)
    if len(text) > MAX_BODY_CHARS:
        return InvalidInput(f"a template body is at most {MAX_BODY_CHARS} characters", code=INVALID_TEMPLATE)
    try:
        check_template(text)
    except TemplateError as exc:
        return InvalidInput(str(exc), code=INVALID_TEMPLATE)
    return None


def _checked(name: str, body: str, by_type: dict[str, str]) -> None:
    errors = template_errors(name=name, body=body, by_type=by_type)
    if errors:
        raise next(iter(errors.values()))


def template_create(*, workspace: Workspace, name: str, body: str, by_type: dict[str, str]) -> OutputTemplate:
    """A new template of the workspace; the same name twice is a 409 `duplicate_template`."""
    _checked(name, body, by_type)
    try:
        with transaction.atomic():
            template = OutputTemplate.objects.create(workspace=workspace, name=name, body=body, by_type=by_type)
            _audit(template, "create", None)
            return template
    except IntegrityError as exc:
        raise Conflict(f"template {name!r} exists", code=DUPLICATE_TEMPLATE) from exc


def template_update(*, template: OutputTemplate, body: str, by_type: dict[str, str]) -> OutputTemplate:
    """Replace a template's bodies (its name stays: agents name it in their requests)."""
    _checked(template.name, body, by_type)
    before = audit.fields_of(template, BODIES)
    template.body, template.by_type = body, by_type
    template.save()
    _audit(template, "update", before)
    return template


def template_delete(*, template: OutputTemplate) -> None:
    """Delete it; a profile that still names it gets the format's default and a warning, a request
    naming it a 400 `unknown_template`."""
    _audit(template, "delete", audit.fields_of(template, BODIES))
    template.delete()


BODIES = ["body", "by_type"]


def _audit(template: OutputTemplate, action: str, before: dict[str, object] | None) -> None:
    audit.record(
        workspace_id=template.workspace_id,
        target_kind=AuditTarget.TEMPLATE,
        action=action,
        target_id=template.pk,
        target_label=template.name,
        old=before,
        new=None if action == "delete" else audit.fields_of(template, BODIES),
    )
