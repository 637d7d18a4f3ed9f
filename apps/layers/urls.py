from __future__ import annotations

from django.urls import path

from apps.layers import api, supersession_api

urlpatterns = [
    path("layers/", api.LayerListCreateApi.as_view(), name="api-layers"),
    path("layers/<int:layer_id>/", api.LayerDetailApi.as_view(), name="api-layer"),
    path("items/", api.ItemListCreateApi.as_view(), name="api-items"),
    path("items/bulk/", api.ItemBulkCreateApi.as_view(), name="api-items-bulk"),
    path("items/<int:item_id>/", api.ItemDetailApi.as_view(), name="api-item"),
    path("relationships/", api.RelationshipListCreateApi.as_view(), name="api-relationships"),
    path("relationships/<int:relationship_id>/", api.RelationshipDetailApi.as_view(), name="api-relationship"),
    path("supersessions/", supersession_api.ProposalListApi.as_view(), name="api-supersessions"),
    path(
        "supersessions/<int:proposal_id>/accept/",
        supersession_api.ProposalAcceptApi.as_view(),
        name="api-supersession-accept",
    ),
    path(
        "supersessions/<int:proposal_id>/reject/",
        supersession_api.ProposalRejectApi.as_view(),
        name="api-supersession-reject",
    ),
]
