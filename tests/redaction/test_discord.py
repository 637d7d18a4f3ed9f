"""Discord bot tokens are redacted as one `discord_token`, including short-id hand-made examples."""

from __future__ import annotations

import pytest

from apps.redaction.redactor import redact

# The reviewer's example: a 19-character id part and a low-entropy HMAC part (38 characters).
SHORT_ID = "MTA1234567890123456.GAbCdE." + "aB3_-9zQxY" * 3 + "aB3_-9zQ"
REAL_SHAPE = "NzkyNzE1NDU0MTk2MDg4ODQy.X-hvzA.Ovy4MCQywSkoMRRclStW4xAYK7I"


@pytest.mark.parametrize("token", [SHORT_ID, REAL_SHAPE])
def test_a_bot_token_is_redacted_whole(token: str) -> None:
    result = redact(f"bot token {token} rejected")
    assert result.text == "bot token [REDACTED:discord_token] rejected"


@pytest.mark.parametrize(
    "text",
    [
        "NotificationService.emails.send_password_reset_confirmation_v2 failed",
        "Loaded MetricsExporterPlugin.prom.register_default_collectors_for_process",
    ],
)
def test_dotted_names_of_that_shape_stay(text: str) -> None:
    assert redact(text).text == text
