"""Keys and members: a new API key, an invitation, a member's role. Checked again by the services."""

from __future__ import annotations

from django import forms
from django.conf import settings

from apps.workspaces.invitations import MAX_DAYS
from apps.workspaces.models import Role, Scope


class KeyForm(forms.Form):
    name = forms.CharField(max_length=100, label="Key name")
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, widget=forms.CheckboxSelectMultiple, initial=[Scope.READ, Scope.WRITE]
    )


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)
    note = forms.CharField(
        max_length=200, required=False, label="For", help_text="Whom it is for, to recognise it here (admins only)."
    )
    days = forms.IntegerField(
        min_value=1, max_value=MAX_DAYS, label="Valid for (days)", initial=lambda: settings.INVITATION_DAYS
    )


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)
