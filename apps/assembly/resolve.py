"""Resolving a context request: the request, then the agent profile, then settings decide each knob."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from django.conf import settings
from django.utils.module_loading import import_string

from apps.assembly.degraded import Degraded, degraded
from apps.assembly.errors import MISSING_QUERY, UNKNOWN_RANKING, UNKNOWN_TEMPLATE
from apps.assembly.models import OutputTemplate
from apps.assembly.params import ContextParams
from apps.core import tokenizer
from apps.core.errors import MISSING_LAYER, InvalidInput
from apps.core.field_errors import INVALID_FORMAT, INVALID_TOKEN_BUDGET, INVALID_TOKENS_USED
from apps.core.tokenizer.estimates import EXACT, Estimate, within_margin
from apps.engine import (
    BUILTIN_TEMPLATES,
    FORMATS,
    PRESETS,
    RankWeights,
    Resolution,
    Scorer,
    Template,
    TemplateError,
    ZoneThresholds,
    zone_for,
)
from apps.layers.models import Layer
from apps.layers.snapshot import LayerSnapshot
from apps.profiles.models import AgentProfile
from apps.profiles.selectors import profile_find
from apps.profiles.services import ProfileInput, profile_check
from apps.tokens.services import model_estimate
from apps.workspaces.models import Workspace


@dataclass(frozen=True)
class Resolved:
    """Everything assembly needs to know, with the warnings resolving produced (the answer's first)."""

    layer: Layer
    profile: AgentProfile | None
    budget: int  # after the context-window cap; may be < 1 (then the context is empty)
    model: str
    tokenizer: tokenizer.TokenizerInfo
    fmt: str
    template: Template | None
    zone: str
    resolution: Resolution
    weights: RankWeights
    scorer: Scorer
    scorer_name: str
    agent_type: str
    package_limit: int
    types: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    estimate: Estimate = EXACT  # an estimated model's ratio and margin (tokens/services.model_estimate)
    requested_budget: int = 0  # as asked (request, else profile, else settings), before any cap or margin


def _layer(snapshot: LayerSnapshot, params: ContextParams) -> Layer:
    if params.layer_id is not None:
        return snapshot.get(params.layer_id)
    if params.layer_external_id:
        return snapshot.get_by_external_id(params.layer_external_id)
    raise InvalidInput("give `layer` or `layer_external_id`", code=MISSING_LAYER)


def _template(workspace: Workspace, name: str | None, *, from_profile: bool) -> tuple[Template | None, str | None]:
    """The named template and what to warn of; an unknown name is a 400 when the request gives it,
    a warning (and the format's default) when a profile does."""
    if not name:
        return None, None
    custom = OutputTemplate.objects.filter(workspace=workspace, name=name).first()
    if custom is not None:
        try:
            by_type = custom.by_type if isinstance(custom.by_type, dict) else {}
            template = Template(
                name=custom.name, body=custom.body, by_type={str(k): str(v) for k, v in by_type.items()}
            )
        except TemplateError as exc:  # stored before a check it fails was added (or written around the API)
            return None, degraded(
                Degraded.TEMPLATE_INVALID, f"template {name!r} is not usable ({exc}); using the format's default"
            )
        return template, None
    if name in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[name], None
    if from_profile:
        return None, f"the profile's template {name!r} does not exist; using the format's default"
    names = ", ".join(sorted(BUILTIN_TEMPLATES))
    raise InvalidInput(
        f"unknown template {name!r} (built in: {names}, or one the workspace registered)", code=UNKNOWN_TEMPLATE
    )


def _scorer(name: str) -> Scorer:
    path = settings.RANKING_FUNCTIONS.get(name)
    if path is None:
        names = ", ".join(sorted(settings.RANKING_FUNCTIONS))
        raise InvalidInput(f"unknown ranking function {name!r} (registered: {names})", code=UNKNOWN_RANKING)
    return import_string(path)


def _draft(workspace: Workspace, name: str | None, draft: ProfileInput) -> AgentProfile:
    """An unsaved profile with `draft`'s settings (checked by the profiles' one validator) and the stored
    profile's excluded items: a draft changes settings, and the items left out are the profile's, so
    "try it" leaves out what every other run with the profile does (the same check in the gather
    pipeline's filters, sources/pipeline.py)."""
    profile_check(data=draft)
    stored = profile_find(workspace=workspace, name=name) if name else None
    excluded = list(stored.excluded_items or []) if stored is not None else []
    return AgentProfile(workspace=workspace, name=name or "draft", excluded_items=excluded, **asdict(draft))


def resolve(
    *, workspace: Workspace, params: ContextParams, layers: LayerSnapshot, profile_draft: ProfileInput | None = None
) -> Resolved:
    """Apply request → profile → settings precedence and validate what only the service can check.

    `profile_draft` stands in for the named profile's stored settings (the profile page's "try it":
    unsaved values, nothing written).
    """
    warnings: list[str] = []
    layer = _layer(layers, params)
    if not params.query.strip() and params.query_vector is None:
        raise InvalidInput("give `query` or `query_vector`", code=MISSING_QUERY)
    profile = None
    if profile_draft is not None:
        profile = _draft(workspace, params.profile, profile_draft)
    elif params.profile:
        profile = profile_find(workspace=workspace, name=params.profile)
        if profile is None:
            warnings.append(f"unknown profile {params.profile!r}; using the defaults")

    requested = (
        params.token_budget
        if params.token_budget is not None
        else (profile.token_budget if profile else None) or settings.DEFAULT_TOKEN_BUDGET
    )
    if not 1 <= requested <= settings.MAX_TOKEN_BUDGET:
        raise InvalidInput(f"token_budget must be between 1 and {settings.MAX_TOKEN_BUDGET}", code=INVALID_TOKEN_BUDGET)
    window = params.context_window or (profile.context_window if profile else None)
    margin = profile.safety_margin if profile else settings.SAFETY_MARGIN
    budget = requested
    if window and params.tokens_used is not None:
        if params.tokens_used > window:
            raise InvalidInput("tokens_used cannot exceed context_window", code=INVALID_TOKENS_USED)
        cap = math.floor(window * (1 - margin)) - params.tokens_used
        if cap < requested:
            budget = cap
            warnings.append(f"budget capped at {max(cap, 0)} tokens: {window} x (1 - {margin}) - {params.tokens_used}")
    thresholds = ZoneThresholds(
        settings.ZONE_SOFT_WARNING, settings.ZONE_CONSERVATIVE, settings.ZONE_WRAP_UP, settings.ZONE_EMERGENCY
    )
    zone = zone_for(tokens_used=params.tokens_used, context_window=window, thresholds=thresholds)
    if zone != "normal":
        warnings.append(f"token zone {zone}: {params.tokens_used} of {window} tokens already used")

    model = params.model or (profile.model if profile and profile.model else None) or settings.DEFAULT_MODEL
    info = tokenizer.encoding_for_model(model)
    estimate = model_estimate(workspace_id=workspace.pk, info=info)
    if info.estimated:
        why = "is not in the model catalogue" if not info.known else "publishes no tokenizer"
        held = within_margin(budget, estimate)
        warnings.append(
            f"model {model!r} {why}; counts use {info.encoding} x {estimate.ratio:.3g}, estimated: the budget"
            f" keeps {estimate.margin:.0%} free so that 99% of prompts fit ({budget} -> {held};"
            f" {estimate.calls} calls observed)"
        )
        budget = held
    fmt = params.format or (profile.preferred_format if profile else None) or "markdown"
    if fmt not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}", code=INVALID_FORMAT)
    scorer_name = params.ranking or (profile.ranking_function if profile else None) or "default"
    template_name = params.template or (profile.template if profile else None)
    if profile and not params.ranking and scorer_name not in settings.RANKING_FUNCTIONS:
        warnings.append(f"profile {profile.name!r} names unknown ranking {scorer_name!r}; using the default")
        scorer_name = "default"
    template, template_warning = _template(workspace, template_name, from_profile=not params.template)
    if template_warning:
        warnings.append(template_warning)
    weights = RankWeights.from_overrides(
        {"recency_half_life_days": settings.RECENCY_HALF_LIFE_DAYS, **(profile.ranking_weights if profile else {})}
    )
    agent_type = params.agent_type or (profile.agent_type if profile else "")
    package_limit = (
        (profile.retrieval_limit if profile and profile.retrieval_limit else None)
        or settings.AGENT_TYPE_PACKAGE_LIMITS.get(agent_type)
        or settings.DEFAULT_PACKAGE_LIMIT
    )
    return Resolved(
        layer=layer,
        profile=profile,
        budget=budget,
        model=model,
        tokenizer=info,
        fmt=fmt,
        template=template,
        zone=zone,
        resolution=PRESETS[profile.conversation_preset if profile else "balanced"],
        weights=weights,
        scorer=_scorer(scorer_name),
        scorer_name=scorer_name,
        agent_type=agent_type,
        package_limit=package_limit,
        types=tuple(params.types) or tuple(profile.type_filters if profile and profile.type_filters else ()),
        requested_budget=requested,
        warnings=tuple(warnings),
        estimate=estimate,
    )
