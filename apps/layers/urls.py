from __future__ import annotations

from django.urls import path

from apps.layers import api

urlpatterns = [
    path("layers/", api.LayerListCreateApi.as_view(), name="api-layers"),
    path("layers/<int:layer_id>/", api.LayerDetailApi.as_view(), name="api-layer"),
    path("items/", api.ItemListCreateApi.as_view(), name="api-items"),
    path("items/bulk/", api.ItemBulkCreateApi.as_view(), name="api-items-bulk"),
    path("items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api-item"),
    path("relationships/", api.RelationshipListCreateApi.as_view(), name="api-relationships"),
    path("relationships/<int:relationship_id>/", api.RelationshipDetailApi.as_view(), name="api-relationship"),
]
