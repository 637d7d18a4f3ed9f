from __future__ import annotations

from django.urls import path

from apps.workspaces import api, archive_api, audit_api

urlpatterns = [
    path("status/", api.StatusApi.as_view(), name="api-status"),
    path("workspace/", api.WorkspaceSettingsApi.as_view(), name="api-workspace-settings"),
    path("workspace/export/", archive_api.WorkspaceExportApi.as_view(), name="api-workspace-export"),
    path("workspace/import/", archive_api.WorkspaceImportApi.as_view(), name="api-workspace-import"),
    path("audit/", audit_api.AuditListApi.as_view(), name="api-audit"),
    path("keys/", api.ApiKeyListCreateApi.as_view(), name="api-keys"),
    path("keys/<int:key_id>/revoke/", api.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
    path("invitations/", api.InvitationListCreateApi.as_view(), name="api-invitations"),
    path("invitations/<int:invitation_id>/revoke/", api.InvitationRevokeApi.as_view(), name="api-invitation-revoke"),
]
