"""Admin for layers, items and relationships.

Edits of layers and items go through the layer services, so kind rules, token counts, content
hashes and re-embedding stay right. A layer's summary configuration is edited in the summaries
admin (`summaries.LayerConfig`), through the same validator as the API. Embeddings and search
vectors are never shown in a form.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import HttpRequest

from apps.layers.models import KIND_RANK, Item, Layer, LayerKind, Relationship
from apps.layers.relationships import relationship_create, relationship_errors
from apps.layers.services import (
    ITEM_EDITABLE_FIELDS,
    item_delete,
    item_update,
    item_update_errors,
    layer_create,
    layer_delete,
    layer_update,
)


class LayerAdminForm(forms.ModelForm):
    """Checks the hierarchy rules up front, so the service never has to refuse a saved form."""

    class Meta:
        model = Layer
        fields = ["workspace", "kind", "name", "parent", "external_id"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        kind = data.get("kind") or (self.instance.kind if self.instance.pk else None)
        parent: Layer | None = data.get("parent")
        workspace = data.get("workspace") or (self.instance.workspace if self.instance.pk else None)
        if kind == LayerKind.COMPANY:
            if not self.instance.pk:
                self.add_error("kind", "Each workspace has exactly one company layer, created with it.")
            elif parent is not None:
                self.add_error("parent", "The company layer has no parent.")
        elif kind:
            if parent is None:
                self.add_error("parent", f"A {kind} layer needs a parent.")
            elif KIND_RANK[parent.kind] >= KIND_RANK[kind]:
                self.add_error("parent", f"A {kind} layer cannot sit under a {parent.kind} layer.")
            elif workspace is not None and parent.workspace_id != workspace.pk:
                self.add_error("parent", "The parent belongs to another workspace.")
        external_id = data.get("external_id")
        if self.instance.pk and external_id and "external_id" in self.changed_data:
            clash = Layer.objects.filter(workspace_id=self.instance.workspace_id, kind=kind, external_id=external_id)
            if clash.exclude(pk=self.instance.pk).exists():
                self.add_error("external_id", f"Another {kind} layer has this external id.")
        return data


@admin.register(Layer)
class LayerAdmin(admin.ModelAdmin):
    form = LayerAdminForm
    list_display = ["name", "kind", "workspace", "parent", "external_id", "created_at"]
    list_filter = ["kind", "workspace"]
    search_fields = ["name", "external_id"]
    raw_id_fields = ["parent"]
    list_select_related = ["workspace", "parent"]

    def get_readonly_fields(self, request: HttpRequest, obj: Layer | None = None) -> list[str]:
        return ["workspace", "kind", "created_at", "updated_at"] if obj else []

    def save_model(self, request: HttpRequest, obj: Layer, form: forms.ModelForm, change: bool) -> None:
        if change:
            changes = {
                name: form.cleaned_data[name] for name in form.changed_data if name in {"name", "parent", "external_id"}
            }
            layer_update(layer=Layer.objects.get(pk=obj.pk), changes=changes)
            return
        created = layer_create(
            workspace=obj.workspace,
            kind=obj.kind,
            name=obj.name,
            parent=obj.parent,
            external_id=obj.external_id or None,
        )
        obj.pk, obj.created_at, obj.updated_at = created.pk, created.created_at, created.updated_at
        obj._state.adding = False

    def has_delete_permission(self, request: HttpRequest, obj: Layer | None = None) -> bool:
        if obj is not None and obj.kind == LayerKind.COMPANY:
            return False  # the workspace's root goes only with the workspace
        return super().has_delete_permission(request, obj)

    def delete_model(self, request: HttpRequest, obj: Layer) -> None:
        layer_delete(layer=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Layer]) -> None:
        queryset.exclude(kind=LayerKind.COMPANY).delete()


class ItemAdminForm(forms.ModelForm):
    """Checks what the item service would refuse, so a bad edit is a form error and not a 500."""

    class Meta:
        model = Item
        fields = list(ITEM_EDITABLE_FIELDS)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # The service's own validator (the API's), every reason at once; the instance is still unchanged here.
        changes = {name: data[name] for name in self.changed_data if name in data and name in ITEM_EDITABLE_FIELDS}
        for name, error in item_update_errors(item=self.instance, changes=changes).items():
            if name not in self.errors:
                self.add_error(name if name in self.fields else None, error.message)
        return data


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    """Items come in through the API; here they can be read, corrected and deleted."""

    form = ItemAdminForm
    list_display = [
        "id",
        "kind",
        "type",
        "short_text",
        "layer",
        "workspace",
        "token_count",
        "pinned",
        "embedded",
        "created_at",
    ]
    list_filter = ["kind", "type", "pinned", "workspace", ("embedding_model", admin.EmptyFieldListFilter)]
    search_fields = ["title", "content", "external_id"]
    list_select_related = ["layer", "workspace"]
    readonly_fields = [
        "workspace",
        "layer",
        "kind",
        "parent",
        "token_count",
        "content_hash",
        "embedding_model",
        "updated_at",
    ]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Item]:
        # Never load the 384 floats or the tsvector; whether an embedding exists is enough.
        embedded = ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField())
        return super().get_queryset(request).defer("embedding", "search_vector").annotate(has_embedding=embedded)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(boolean=True, description="Embedded", ordering="has_embedding")
    def embedded(self, obj: Item) -> bool:
        return bool(getattr(obj, "has_embedding", False))

    @admin.display(description="Text")
    def short_text(self, obj: Item) -> str:
        text = obj.title or obj.content
        return text if len(text) <= 80 else f"{text[:79]}…"

    def save_model(self, request: HttpRequest, obj: Item, form: forms.ModelForm, change: bool) -> None:
        changes = {name: form.cleaned_data[name] for name in form.changed_data if name in ITEM_EDITABLE_FIELDS}
        item_update(item=Item.objects.select_related("layer").get(pk=obj.pk), changes=changes)

    def delete_model(self, request: HttpRequest, obj: Item) -> None:
        item_delete(item=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Item]) -> None:
        for item in queryset.select_related("layer"):
            item_delete(item=item)


class RelationshipAdminForm(forms.ModelForm):
    """Checked by `relationship_errors`, the API's and the pages' validator: both ends in the chosen workspace."""

    class Meta:
        model = Relationship
        fields = ["workspace", "source", "target", "kind", "weight"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        errors = relationship_errors(
            workspace=data["workspace"],
            source_id=data["source"].pk,
            target_id=data["target"].pk,
            kind=data["kind"],
            weight=data["weight"],
        )
        for name, error in errors.items():
            self.add_error(name if name in self.fields else None, error.message)
        return data

    def validate_unique(self) -> None:
        """The duplicate edge is the validator's (with its message), not the model form's."""


@admin.register(Relationship)
class RelationshipAdmin(admin.ModelAdmin):
    """Edges are made through `relationship_create` and deleted, never edited (delete and add another)."""

    form = RelationshipAdminForm
    list_display = ["source", "kind", "target", "weight", "workspace", "created_at"]
    list_filter = ["kind", "workspace"]
    search_fields = ["source__title", "target__title"]
    raw_id_fields = ["source", "target"]
    list_select_related = ["workspace", "source", "target"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Relationship]:
        heavy = ["source__embedding", "source__search_vector", "target__embedding", "target__search_vector"]
        return super().get_queryset(request).defer(*heavy)

    def has_change_permission(self, request: HttpRequest, obj: Relationship | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Relationship, form: forms.ModelForm, change: bool) -> None:
        created = relationship_create(
            workspace=obj.workspace, source_id=obj.source_id, target_id=obj.target_id, kind=obj.kind, weight=obj.weight
        )
        obj.pk, obj.created_at = created.pk, created.created_at
        obj._state.adding = False
