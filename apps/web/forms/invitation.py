"""Signing up through an invitation: a username and a password twice, checked by Django's validators."""

from __future__ import annotations

from django.contrib.auth.forms import UserCreationForm


class SignUpForm(UserCreationForm):
    """A new account; the invitation decides the workspace and the role."""

    def username_taken(self) -> bool:
        """The username is someone else's (counted against the address, like a wrong password)."""
        return self.has_error("username", code="unique")
