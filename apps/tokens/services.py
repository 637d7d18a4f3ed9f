"""Counting tokens for a model (exact, or a calibrated estimate) and recording what upstreams report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.core import tokenizer
from apps.core.connections import connection_release
from apps.core.errors import InvalidInput, TooLarge
from apps.core.tokenizer.chat import count_chat
from apps.core.tokenizer.estimates import EXACT, Estimate, scaled
from apps.tokens.errors import INVALID_TOKEN_COUNT, MISSING_TEXT, TOKENS_INPUT_TOO_LARGE
from apps.tokens.models import TokenObservation
from apps.tokens.selectors import estimate_for, estimate_forget
from apps.workspaces.models import Workspace

# Tool definitions and non-text parts are counted as their JSON, which is not how any provider
# renders them: this share is kept free for them (not measured; the observations show the error).
RENDERING_MARGIN = 0.1
# Past this many characters the counting runs with the request's pooled connection given back.
OFF_CONNECTION_CHARS = 20_000


@dataclass(frozen=True)
class TokenCount:
    """What a prompt costs in a model: `tokens` (exact, or the calibrated estimate), the encoding
    counted in, and the share of a budget to keep free (`margin`) so that 99% of prompts fit."""

    model: str
    tokens: int
    encoding: str
    exact: bool
    margin: float
    base_tokens: int  # the count in `encoding` before an estimate's ratio
    known: bool  # the model is in the catalogue
    context_window: int | None
    calls: int  # the observations an estimate rests on (0: its starting values)
    estimate_family: str = ""


def model_estimate(*, workspace_id: int, info: tokenizer.TokenizerInfo) -> Estimate:
    """EXACT for a model counted in its own vocabulary, else its family's calibration in the workspace."""
    if not info.estimated:
        return EXACT
    return estimate_for(workspace_id=workspace_id, family=info.spec.estimate)


def tokens_count(
    *,
    workspace: Workspace,
    model: str,
    text: str | None = None,
    messages: Sequence[Mapping[str, Any]] | None = None,
    tools: Sequence[Mapping[str, Any]] = (),
) -> TokenCount:
    """The tokens of `text`, or of a chat request (`messages` and `tools` as its model's template wraps them)."""
    if (text is None) == (messages is None):
        raise InvalidInput("give `text` or `messages`", code=MISSING_TEXT)
    info = tokenizer.encoding_for_model(model)
    estimate = model_estimate(workspace_id=workspace.pk, info=info)
    size = len(text) if text is not None else len(repr(messages)) + len(repr(tools))
    if size > settings.TOKENS_MAX_CHARS:
        raise TooLarge(
            f"at most {settings.TOKENS_MAX_CHARS} characters are counted per request",
            code=TOKENS_INPUT_TOO_LARGE,
            details={"limit_chars": settings.TOKENS_MAX_CHARS, "chars": size},
        )
    if size > OFF_CONNECTION_CHARS:
        connection_release()
    if text is not None:
        base, rendered = tokenizer.count_tokens(text, info.encoding), True
    else:
        base, rendered = count_chat(info.spec, info.encoding, messages or (), tools)
    margin = estimate.margin + (0.0 if rendered else RENDERING_MARGIN)
    return TokenCount(
        model=model,
        tokens=scaled(base, estimate),
        encoding=info.encoding,
        exact=not info.estimated and rendered,
        margin=round(margin, 4),
        base_tokens=base,
        known=info.known,
        context_window=info.spec.context_window or None,
        calls=estimate.calls,
        estimate_family=info.spec.estimate,
    )


def token_observation_record(*, workspace: Workspace, count: TokenCount, reported: int) -> TokenObservation:
    """Record that an upstream reported `reported` prompt tokens for a prompt we counted as `count`
    (the proxy calls this with each answer's usage); it calibrates the model's estimate family."""
    if reported < 0 or count.tokens < 0:
        raise InvalidInput("token counts cannot be negative", code=INVALID_TOKEN_COUNT)
    observation = TokenObservation.objects.create(
        workspace=workspace,
        model=count.model[:200],
        family="" if count.exact or not count.estimate_family else count.estimate_family,
        encoding=count.encoding,
        counted=count.tokens,
        base_tokens=count.base_tokens,
        reported=reported,
    )
    if observation.family:
        estimate_forget(workspace_id=workspace.pk, family=observation.family)
    return observation
