"""Whole-workspace export and import (admin keys): the archive of apps/core/archive over HTTP.

`GET /api/v1/workspace/export/` writes the key's workspace to a temporary file in one snapshot and
streams it; `POST /api/v1/workspace/import/` takes an archive as the body (`application/zip`, at
most MAX_REQUEST_BODY_BYTES: `manage.py workspace_import` has no limit) and restores it into the
key's workspace, which must be empty. docs/workspace-archive.md describes the format.
"""

from __future__ import annotations

import asyncio
import io
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import IO, Any

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.core.archive.export import archive_export
from apps.core.archive.restore import archive_restore
from apps.core.serializers import StrictSerializer
from apps.workspaces.authentication import workspace_of
from apps.workspaces.models import Scope, Workspace

MEDIA_TYPE = "application/zip"
CHUNK = 1 << 20

VECTORS_HELP = "Include the vectors of items, summaries and communities (kB per row)."


class ArchiveParser(BaseParser):
    """The body as a file (spooled to disk past 8 MB), for the zip reader's random access."""

    media_type = MEDIA_TYPE

    def parse(
        self, stream: IO[Any] | None, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        spool = tempfile.SpooledTemporaryFile(max_size=8 << 20)
        if stream is not None:
            shutil.copyfileobj(stream, spool, CHUNK)
        spool.seek(0)
        return spool


def archive_source(workspace: Workspace) -> dict[str, Any]:
    """What the manifest says of the workspace an archive came from."""
    return {"slug": workspace.slug, "name": workspace.name}


def archive_filename(workspace: Workspace) -> str:
    return f"contextarch-{workspace.slug}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.zip"


async def _chunks(file: IO[bytes]) -> AsyncIterator[bytes]:
    # An async iterator: the server sends each chunk as it is read (a sync one is read whole first).
    try:
        while chunk := await asyncio.to_thread(file.read, CHUNK):
            yield chunk
    finally:
        file.close()


class WorkspaceExportApi(APIView):
    """The key's workspace as an archive: a zip of JSON lines with a manifest (format, counts, hashes)."""

    required_scope = Scope.ADMIN

    class Query(StrictSerializer):
        embeddings = serializers.BooleanField(default=False, help_text=VECTORS_HELP)

    @extend_schema(
        parameters=[OpenApiParameter("embeddings", OpenApiTypes.BOOL, description=VECTORS_HELP)],
        responses={(200, MEDIA_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The workspace archive")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        query = self.Query(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        workspace = workspace_of(request)
        out = tempfile.TemporaryFile()
        try:
            archive_export(
                workspace_id=workspace.pk,
                source=archive_source(workspace),
                out=out,
                embeddings=query.validated_data["embeddings"],
            )
            size = out.tell()
            out.seek(0)
        except BaseException:
            out.close()
            raise
        response = StreamingHttpResponse(_chunks(out), content_type=MEDIA_TYPE)
        response["Content-Length"] = str(size)
        response["Content-Disposition"] = f'attachment; filename="{archive_filename(workspace)}"'
        response["Cache-Control"] = "no-store"
        return response


class WorkspaceImportOutput(serializers.Serializer):
    source = serializers.DictField(help_text="The workspace the archive came from (slug, name)")  # type: ignore[assignment]
    rows = serializers.DictField(child=serializers.IntegerField(), help_text="Rows restored per part")


class WorkspaceImportApi(APIView):
    """Restore an archive into the key's workspace, which must hold nothing yet (409
    `workspace_not_empty`); a damaged or foreign archive is a 400 (`archive_damaged`,
    `archive_format_unknown`, `archive_member_missing`, `archive_invalid`) and nothing is written."""

    required_scope = Scope.ADMIN
    parser_classes = [ArchiveParser]

    @extend_schema(
        request={MEDIA_TYPE: OpenApiTypes.BINARY},
        responses={201: WorkspaceImportOutput},
    )
    def post(self, request: Request) -> Response:
        # An empty body is never handed to the parser: DRF answers an empty mapping instead.
        data: Any = request.data
        source: IO[bytes] = data if hasattr(data, "read") else io.BytesIO()
        try:
            restored = archive_restore(workspace_id=workspace_of(request).pk, source=source)
        finally:
            source.close()
        body = {"source": restored.source, "rows": restored.rows}
        return Response(WorkspaceImportOutput(body).data, status=status.HTTP_201_CREATED)
