"""`manage.py login_unlock <username> [--address A]`: the reset path of the sign-in limits."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from apps.core.login_limits import login_limits_reset


class Command(BaseCommand):
    help = "Clear the wrong-password counts of a username (at every address) and, with --address, of that address."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--address", default=None, help="also clear this client address's count over all usernames")

    def handle(self, *args: Any, username: str, address: str | None, **options: Any) -> None:
        login_limits_reset(username=username, address=address)
        where = f" and the address {address}" if address else ""
        self.stdout.write(f"Sign-in limits cleared for {username}{where}.")
