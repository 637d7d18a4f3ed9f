"""The model catalogue: each model's context window, tokenizer, and whether its counts are exact.

One list, read by assembly's resolve, the token endpoint, the proxy and the pages (profile forms
offer its models). A model name matches the longest entry it starts with, followed by the end of
the name or a separator other than '.' (so "qwen3.5" is not "qwen3", and "gpt-4.1" is its own
entry); a provider prefix such as "openai/", "meta-llama/", "Qwen/", "models/" is ignored.
An unknown model is counted like `UNKNOWN` (cl100k_base, estimated) and resolve says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ChatFormat(StrEnum):
    """How a model's chat template wraps each message (chat.py counts each)."""

    OPENAI = "openai"  # <|im_start|>role<|im_sep|>content<|im_end|> and 3 tokens priming the reply
    HARMONY = "harmony"  # gpt-oss: <|start|>role<|message|>content<|end|>
    LLAMA3 = "llama3"  # <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
    CHATML = "chatml"  # Qwen: <|im_start|>role\ncontent<|im_end|>\n
    MISTRAL = "mistral"  # tekken v3: [INST]user[/INST]assistant</s>


@dataclass(frozen=True)
class ModelSpec:
    """One catalogue entry: a model name (prefix), its window and how its tokens are counted.

    `exact`: the count comes from the model's own vocabulary. Otherwise it is an estimate in
    `encoding` scaled by the `estimate` family's calibrated ratio (tokens/estimates.py).
    """

    name: str
    provider: str
    context_window: int
    encoding: str
    exact: bool
    chat: ChatFormat = ChatFormat.OPENAI
    estimate: str = ""  # the calibration family of an estimated model
    default_system: str = ""  # a system message the model's chat template adds when none is given


def _openai(name: str, window: int, encoding: str = "o200k_base") -> ModelSpec:
    return ModelSpec(name=name, provider="OpenAI", context_window=window, encoding=encoding, exact=True)


def _llama(name: str, window: int) -> ModelSpec:
    return ModelSpec(
        name=name, provider="Meta", context_window=window, encoding="llama3", exact=True, chat=ChatFormat.LLAMA3
    )


_QWEN25_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."


def _qwen(name: str, window: int, default_system: str = "") -> ModelSpec:
    return ModelSpec(
        name=name,
        provider="Alibaba",
        context_window=window,
        encoding="qwen2",
        exact=True,
        chat=ChatFormat.CHATML,
        default_system=default_system,
    )


def _mistral(name: str, window: int, *, exact: bool = True) -> ModelSpec:
    return ModelSpec(
        name=name,
        provider="Mistral",
        context_window=window,
        encoding="tekken",
        exact=exact,
        chat=ChatFormat.MISTRAL,
        estimate="" if exact else "mistral",
    )


def _estimated(name: str, provider: str, window: int, estimate: str) -> ModelSpec:
    return ModelSpec(
        name=name, provider=provider, context_window=window, encoding="o200k_base", exact=False, estimate=estimate
    )


MODELS: tuple[ModelSpec, ...] = (
    _openai("gpt-4o", 128_000),
    _openai("chatgpt-4o", 128_000),
    _openai("gpt-4.1", 1_047_576),
    _openai("gpt-4.5", 128_000),
    _openai("gpt-5", 400_000),
    _openai("gpt-5.", 400_000),
    _openai("o1", 200_000),
    _openai("o3", 200_000),
    _openai("o4-mini", 200_000),
    _openai("gpt-4-turbo", 128_000, "cl100k_base"),
    _openai("gpt-4", 8_192, "cl100k_base"),
    _openai("gpt-4-32k", 32_768, "cl100k_base"),
    _openai("gpt-3.5-turbo", 16_385, "cl100k_base"),
    _openai("text-embedding-3", 8_191, "cl100k_base"),
    ModelSpec(
        name="gpt-oss",
        provider="OpenAI",
        context_window=131_072,
        encoding="o200k_harmony",
        exact=True,
        chat=ChatFormat.HARMONY,
    ),
    _llama("llama-3", 8_192),
    _llama("meta-llama-3", 8_192),
    _llama("llama-3.1", 131_072),
    _llama("meta-llama-3.1", 131_072),
    _llama("llama-3.2", 131_072),
    _llama("llama-3.3", 131_072),
    _llama("llama3", 8_192),
    _llama("llama3.1", 131_072),
    _llama("llama3.2", 131_072),
    _llama("llama3.3", 131_072),
    _qwen("qwen2", 32_768),
    _qwen("qwen2.5", 32_768, _QWEN25_SYSTEM),
    _qwen("qwen3", 32_768),
    _mistral("mistral-nemo", 131_072),
    _mistral("open-mistral-nemo", 131_072),
    _mistral("ministral-8b-2410", 131_072),
    _mistral("pixtral-12b", 131_072),
    _mistral("mistral-small-2409", 32_768),
    # Tekken tokenizers of later versions (v7 and up): their files are not in a package here, so
    # they are counted with tekken_240718 and calibrated like the estimated families.
    _mistral("mistral-small", 131_072, exact=False),
    _mistral("mistral-medium", 131_072, exact=False),
    _mistral("devstral", 131_072, exact=False),
    _mistral("magistral", 40_000, exact=False),
    _estimated("claude", "Anthropic", 200_000, "claude"),
    _estimated("gemini", "Google", 1_048_576, "gemini"),
)
UNKNOWN = ModelSpec(name="", provider="", context_window=0, encoding="cl100k_base", exact=False, estimate="unknown")
_BY_NAME = {spec.name: spec for spec in MODELS}
_PREFIXES = ("openai/", "meta-llama/", "qwen/", "mistralai/", "anthropic/", "google/", "models/")


def _boundary(name: str, at: int) -> bool:
    return at == len(name) or not (name[at].isalnum() or name[at] == ".")


def model_spec(model: str) -> ModelSpec | None:
    """The catalogue entry of `model`, or None when the catalogue does not know it."""
    name = model.strip().lower()
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    best: ModelSpec | None = None
    for spec in MODELS:
        key = spec.name
        if name.startswith(key) and (key.endswith(".") or _boundary(name, len(key))):
            if best is None or len(key) > len(best.name):
                best = spec
    return best


def catalogue_models() -> tuple[ModelSpec, ...]:
    """Every entry, for the pages' model choices and the API's model list."""
    return MODELS
