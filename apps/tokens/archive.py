"""The tokens app's part of a workspace archive (apps/core/archive): token observations, which
calibrate the budgets of models whose tokenizer is estimated (`selectors.estimate_for`)."""

from __future__ import annotations

from apps.core.archive.parts import model_part, register
from apps.tokens.models import TokenObservation


def register_parts() -> None:
    register(
        model_part(
            name="token_observations",
            order=130,
            model=TokenObservation,
            fields=("model", "family", "encoding", "counted", "base_tokens", "reported"),
        )
    )
