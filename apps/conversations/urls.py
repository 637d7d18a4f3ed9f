from __future__ import annotations

from django.urls import path

from apps.conversations import api

urlpatterns = [
    path("layers/import/", api.ImportApi.as_view(), name="api-conversation-import"),
    path("layers/<int:layer_id>/export/", api.ExportApi.as_view(), name="api-conversation-export"),
    path("layers/<int:layer_id>/branches/", api.BranchesApi.as_view(), name="api-conversation-branches"),
    path("layers/<int:layer_id>/communities/", api.CommunitiesApi.as_view(), name="api-conversation-communities"),
    path("items/<int:item_id>/thread/", api.ThreadApi.as_view(), name="api-message-thread"),
    path("items/<int:item_id>/importance/", api.ImportanceApi.as_view(), name="api-message-importance"),
]
