"""Package items and the package ids of an answer, shared by the package and consumption tests."""

from __future__ import annotations

from typing import Any


def package_ids(body: dict[str, Any]) -> list[int]:
    """The package items of a context response, in context order."""
    return [c["id"] for c in body["chunks"] if c["kind"] == "package"]


def package(content: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "package", "type": "research", "content": content, **fields}
