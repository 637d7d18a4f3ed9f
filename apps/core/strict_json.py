"""Strict JSON: the one check every input (bodies, WebSocket messages, query strings, paths) passes.

PostgreSQL refuses NUL in text and jsonb, UTF-8 cannot encode a lone surrogate, NaN and Infinity
are not JSON and break ordering and rendering, and a deeply nested document exhausts the
recursion limit of whatever walks it next (serializers, the renderer, jsonb). Each of these used
to surface as a 500 somewhere downstream, or worse, as a committed row that every later read
trips on. They are refused here, before any view sees the value, with a 400 and a stable code.
"""

from __future__ import annotations

import json
import math
from typing import Any

from apps.core import errors
from apps.core.errors import InvalidInput
from apps.core.field_errors import field_code

# Deepest nesting of objects and arrays accepted in a JSON document (the top level is depth 1).
# Nothing the API takes nests deeper than a handful of levels (metadata is free-form: 32 is plenty).
MAX_JSON_DEPTH = 32

NUL = "\x00"


class MalformedJson(InvalidInput):
    code = errors.MALFORMED_JSON.code


class JsonTooDeep(InvalidInput):
    code = errors.JSON_TOO_DEEP.code


class InvalidNumber(InvalidInput):
    code = errors.INVALID_NUMBER.code


class InvalidCharacters(InvalidInput):
    code = errors.INVALID_CHARACTERS.code


def bad_character(text: str) -> str | None:
    """Why `text` cannot be stored or encoded (NUL, a lone surrogate), or None when it can."""
    if NUL in text:
        return "the NUL character (\\u0000)"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "a lone surrogate (not valid Unicode)"
    return None


Path = tuple[str | int, ...]


def _dotted(path: Path) -> str:
    """("items", 0, "metadata") → "items[0].metadata", as validation errors name a place."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part[:100]}" if text else part[:100])
    return text


def _refusal(cls: type[InvalidInput], problem: str, *, where: str, path: Path) -> InvalidInput:
    """Inside a top-level field the code names it (`invalid_metadata`), as a validation error would."""
    if not path or not isinstance(path[0], str):
        return cls(f"the {where} {problem}", details={"where": where})
    field = path[0]
    return cls(f"{_dotted(path)} {problem}", code=field_code(field), details={"where": where, "field": field})


def _too_deep(where: str) -> JsonTooDeep:
    return JsonTooDeep(f"the {where} nests deeper than {MAX_JSON_DEPTH} levels", details={"max_depth": MAX_JSON_DEPTH})


def check_value(value: Any, *, where: str = "body") -> None:
    """Raise a 400 when any string (keys included) in `value` is unstorable, a number is not finite,
    or it nests deeper than MAX_JSON_DEPTH. Iterative, so it never recurses however deep the value is."""
    stack: list[tuple[Any, int, Path]] = [(value, 1, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str):
            reason = bad_character(node)
            if reason:
                raise _refusal(InvalidCharacters, f"contains {reason}", where=where, path=path)
        elif isinstance(node, float):
            if not math.isfinite(node):
                problem = "holds NaN or an infinite number; send a finite number"
                raise _refusal(InvalidNumber, problem, where=where, path=path)
        elif isinstance(node, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                raise _too_deep(where)
            if isinstance(node, dict):
                for key, child in node.items():
                    reason = bad_character(key)
                    if reason:  # a bad key is named by its parent (the body itself at the top)
                        raise _refusal(InvalidCharacters, f"has a key that contains {reason}", where=where, path=path)
                    stack.append((child, depth + 1, (*path, key)))
            elif all(type(child) is float or type(child) is int for child in node):
                # A list of plain numbers (a query vector): checked in one pass, no entry per number,
                # last first as the stack would pop them (the same bad position is named).
                for index in range(len(node) - 1, -1, -1):
                    child = node[index]
                    if type(child) is float and not math.isfinite(child):
                        problem = "holds NaN or an infinite number; send a finite number"
                        raise _refusal(InvalidNumber, problem, where=where, path=(*path, index))
            else:
                stack.extend((child, depth + 1, (*path, index)) for index, child in enumerate(node))


def loads_strict(text: str | bytes, *, where: str = "body") -> Any:
    """Parse JSON, refusing NaN/Infinity (literals, or numbers that overflow to them), NUL, lone
    surrogates and nesting deeper than MAX_JSON_DEPTH; every refusal is an InvalidInput (a 400) with
    its code: `invalid_<field>` inside a top-level field, else `invalid_number`/`invalid_characters`,
    `json_too_deep`, `malformed_json`."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedJson(f"the {where} is not UTF-8: {exc.reason} at byte {exc.start}") from exc
    try:
        value = json.loads(text)  # NaN, Infinity and 1e999 parse to floats that check_value refuses
    except RecursionError as exc:  # the C scanner stops at the interpreter's recursion limit
        raise _too_deep(where) from exc
    except json.JSONDecodeError as exc:
        raise MalformedJson(f"the {where} is not JSON: {exc}") from exc
    except ValueError as exc:  # an integer beyond Python's digit limit
        raise InvalidNumber(f"the {where} holds a number out of range: {exc}") from exc
    check_value(value, where=where)
    return value
