"""The pages. One line per page; each area's views live in apps/web/views/<area>.py."""

from __future__ import annotations

from django.urls import path

from apps.web.views import dashboard, layers, members, patterns, preview, preview_stream, profiles, sessions, workspace

app_name = "web"
urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("workspace/", workspace.switch, name="workspace-switch"),
    path("workspace/new/", workspace.create, name="workspace-new"),
    path("layers/", layers.tree, name="layers"),
    path("layers/<int:layer_id>/", layers.detail, name="layer"),
    path("layers/<int:layer_id>/config/", layers.config_save, name="layer-config"),
    path("layers/<int:layer_id>/summarize/", layers.summarize, name="layer-summarize"),
    path("layers/<int:layer_id>/items/", layers.item_add, name="layer-item-add"),
    path("layers/<int:layer_id>/items/<int:item_id>/", layers.item_row, name="layer-item"),
    path("layers/<int:layer_id>/items/<int:item_id>/edit/", layers.item_edit, name="layer-item-edit"),
    path("layers/<int:layer_id>/items/<int:item_id>/delete/", layers.item_remove, name="layer-item-delete"),
    path("layers/<int:layer_id>/items/<int:item_id>/relationships/", layers.relation_add, name="layer-item-relate"),
    path(
        "layers/<int:layer_id>/items/<int:item_id>/relationships/<int:relationship_id>/delete/",
        layers.relation_remove,
        name="layer-item-unrelate",
    ),
    path("layers/<int:layer_id>/children/", layers.child_add, name="layer-child-add"),
    path("layers/<int:layer_id>/edit/", layers.edit, name="layer-edit"),
    path("layers/<int:layer_id>/delete/", layers.remove, name="layer-delete"),
    path("profiles/", profiles.profiles, name="profiles"),
    path("profiles/+new/", profiles.profile_new, name="profile-new"),
    path("profiles/+new/try/", profiles.profile_new_try, name="profile-new-try"),
    path("profiles/<str:name>/", profiles.profile, name="profile"),
    path("profiles/<str:name>/try/", profiles.profile_try, name="profile-try"),
    path("profiles/<str:name>/compare/", profiles.profile_compare, name="profile-compare"),
    path("profiles/<str:name>/delete/", profiles.profile_remove, name="profile-delete"),
    path("patterns/", patterns.patterns, name="patterns"),
    path("patterns/<int:pattern_id>/", patterns.pattern, name="pattern"),
    path("patterns/<int:pattern_id>/delete/", patterns.pattern_remove, name="pattern-delete"),
    path("members/", members.members, name="members"),
    path("members/keys/", members.key_add, name="key-add"),
    path("members/keys/<int:key_id>/revoke/", members.key_revoke, name="key-revoke"),
    path("members/set/", members.member_set, name="member-set"),
    path("members/<int:membership_id>/remove/", members.member_remove, name="member-remove"),
    path("preview/", preview.preview, name="preview"),
    path("preview/stream/", preview_stream.preview_stream, name="preview-stream"),
    path("sessions/", sessions.sessions, name="sessions"),
    path("sessions/<int:layer_id>/", sessions.session, name="session"),
]
