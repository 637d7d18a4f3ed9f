"""Each family's counts equal its reference tokenizer's on adversarial text; the files are the published ones.

References: Meta's `llama_models` Tokenizer and ChatFormat (Llama 3), Mistral's `mistral_common`
Tekkenizer and InstructTokenizerV3 (Tekken), Hugging Face `tokenizers` built the way Qwen2's
tokenizer.json is (NFC, Qwen's split pattern, byte-level BPE over qwen.tiktoken's merges) and the
token ids llama.cpp's vocabulary tests record from Hugging Face's Qwen tokenizer, and tiktoken's
own o200k_harmony (gpt-oss).
"""

from __future__ import annotations

import base64
import functools
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import regex
import tiktoken
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from apps.core import tokenizer
from apps.core.tokenizer import vocabularies
from apps.core.tokenizer.chat import count_chat
from apps.core.tokenizer.long_pieces import LONG_RUN, encode_long, has_long_run, merge_by_rank

# Letters of several scripts and cases, marks, digits, contractions, every kind of space and line
# break, punctuation runs, emoji (4 bytes), special-token look-alikes, text Qwen normalizes (NFC).
ADVERSARIAL = st.lists(
    st.one_of(
        st.sampled_from(
            [
                *"aZq  \n\r\t'/.,:#-_{}\"0189!?",
                "'s",
                "'LL",
                "'d",
                "\u00a0",
                "\u0301",
                "é",
                "e\u0301",
                "A\u030a",
                "\u1100\u1161",
                "ß",
                "ǅ",
                "日本語",
                "漢字",
                "한국어",
                "Привет",
                "مرحبا",
                "हिन्दी",
                "ไทย",
                "😀",
                "👩‍💻",
                "\u2028",
                "\u3000",
                "<|endoftext|>",
                "<|im_start|>",
                "[INST]",
                "<s>",
                "<|eot_id|>",
                "    ",
                "\n\n\n",
                "1234567",
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=60,
).map("".join)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-level alphabet, as Hugging Face's ByteLevel pre-tokenizer maps bytes."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars, strict=True)}


@functools.cache
def _hf_qwen() -> Any:
    """A Hugging Face tokenizer shaped as Qwen2's tokenizer.json, over the shipped qwen.tiktoken."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers

    ranks = {
        base64.b64decode(t): int(r) for t, r in (line.split() for line in vocabularies.QWEN_FILE.read().splitlines())
    }
    alphabet = _bytes_to_unicode()
    show = lambda b: "".join(alphabet[x] for x in b)  # noqa: E731
    vocab = {show(token): rank for token, rank in ranks.items()}
    merges = []
    for token, rank in ranks.items():
        pairs = [(token[:i], token[i:]) for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks]
        merges += [(rank, ranks[a], ranks[b], show(a), show(b)) for a, b in pairs]
    merges.sort()
    bpe = models.BPE(vocab=vocab, merges=[(a, b) for *_, a, b in merges], ignore_merges=False)
    hf = Tokenizer(bpe)
    hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(vocabularies.QWEN_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return hf


@functools.cache
def _meta_llama3() -> Any:
    from llama_models.llama3.tokenizer import Tokenizer

    return Tokenizer(Path(str(resources.files("llama_models").joinpath("llama3/tokenizer.model"))))


@functools.cache
def _mistral_tekken() -> Any:
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    return MistralTokenizer.v3(is_tekken=True)


@pytest.mark.parametrize("file", [vocabularies.LLAMA3_FILE, vocabularies.QWEN_FILE, vocabularies.TEKKEN_FILE])
def test_each_shipped_vocabulary_is_the_published_file(file: vocabularies.VocabularyFile) -> None:
    assert hashlib.sha256(file.read()).hexdigest() == file.sha256


def test_a_vocabulary_that_is_not_the_published_one_is_refused() -> None:
    forged = vocabularies.VocabularyFile(
        package="llama_models", path="llama3/tokenizer.model", sha256="0" * 64, hash_source="test"
    )
    with pytest.raises(vocabularies.VocabularyMismatch):
        forged.read()


def test_qwen_matches_the_ids_hugging_face_gave_llama_cpps_vocabulary_test() -> None:
    # llama.cpp models/ggml-vocab-qwen2.gguf.inp/.out: Hugging Face's Qwen tokenizer's ids for these inputs.
    assert tokenizer.encode("ied 4 ½ months", "qwen2") == [1122, 220, 19, 220, 26062, 3951]
    assert tokenizer.encode(" this is 🦙.cpp", "qwen2") == [419, 374, 11162, 99, 247, 13, 10821]
    assert tokenizer.encode("\n =", "qwen2") == [198, 284]


@settings(max_examples=300, deadline=None)
@given(text=ADVERSARIAL)
def test_llama3_counts_like_metas_tokenizer(text: str) -> None:
    assert tokenizer.encode(text, "llama3") == _meta_llama3().encode(text, bos=False, eos=False)


@settings(max_examples=300, deadline=None)
@given(text=ADVERSARIAL)
def test_tekken_counts_like_mistral_common(text: str) -> None:
    reference = _mistral_tekken().instruct_tokenizer.tokenizer
    ours = tokenizer.encode(text, "tekken")
    assert [t + reference.num_special_tokens for t in ours] == reference.encode(text, bos=False, eos=False)


@settings(max_examples=300, deadline=None)
@given(text=ADVERSARIAL)
def test_qwen_counts_like_a_hugging_face_tokenizer_built_as_qwens(text: str) -> None:
    assert tokenizer.encode(text, "qwen2") == _hf_qwen().encode(text, add_special_tokens=False).ids


@settings(max_examples=200, deadline=None)
@given(text=ADVERSARIAL)
def test_gpt_oss_counts_like_tiktokens_o200k_harmony(text: str) -> None:
    assert tokenizer.encode(text, "o200k_harmony") == tiktoken.get_encoding("o200k_harmony").encode_ordinary(text)


@settings(max_examples=200, deadline=None)
@given(piece=st.binary(max_size=40) | ADVERSARIAL.map(str.encode), encoding=st.sampled_from(tokenizer.ENCODINGS))
def test_the_heap_merge_is_tiktokens_merge(piece: bytes, encoding: str) -> None:
    enc = tokenizer.get_encoding(encoding)
    if piece:
        assert merge_by_rank(piece, enc._mergeable_ranks) == enc._encode_single_piece(piece)


@settings(max_examples=40, deadline=None)
@given(
    run=st.sampled_from(["漢", "aB", "é", "\u0301", "कि", "😀", "=", "!/", "!\x1f", " ", " \t", "\n", "\n/", "ab1"]),
    times=st.integers(400, 1500),
    around=ADVERSARIAL,
    encoding=st.sampled_from(tokenizer.ENCODINGS),
)
def test_text_with_long_runs_is_encoded_exactly(run: str, times: int, around: str, encoding: str) -> None:
    text = around + run * times + around
    enc = tokenizer.get_encoding(encoding)
    if encoding == "qwen2":
        import unicodedata

        text = unicodedata.normalize("NFC", text)
    assert encode_long(text, enc) == enc.encode_ordinary(text)
    assert tokenizer.encode(text, encoding) == enc.encode_ordinary(text)


@settings(max_examples=200, deadline=None)
@given(
    run=st.sampled_from(["漢", "aB", "é", "कि", "😀", "=", "!/", "!\x1f", "=\n/", " \t", "\n", "\u3000", "'s"]),
    times=st.integers(100, 1200),
    around=ADVERSARIAL,
    encoding=st.sampled_from(tokenizer.ENCODINGS),
)
def test_every_text_with_a_long_pre_token_takes_the_bounded_path(
    run: str, times: int, around: str, encoding: str
) -> None:
    text = around + run * times + around
    pieces = regex.findall(tokenizer.get_encoding(encoding)._pat_str, text)
    if max(map(len, pieces), default=0) >= LONG_RUN:
        assert has_long_run(text)


MESSAGES = st.lists(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant"]), "content": ADVERSARIAL}),
    min_size=1,
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(messages=MESSAGES)
def test_llama3_chat_counts_like_metas_chat_format(messages: list[dict[str, str]]) -> None:
    from llama_models.datatypes import RawMessage
    from llama_models.llama3.chat_format import ChatFormat

    spec = tokenizer.model_spec("llama-3.1-8b-instruct")
    assert spec is not None
    dialog = [RawMessage(role=m["role"], content=m["content"]) for m in messages]
    reference = ChatFormat(_meta_llama3()).encode_dialog_prompt(dialog).tokens
    assert count_chat(spec, "llama3", messages, []) == (len(reference), True)


def _alternating(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """A system message, then user and assistant in turns ending with the user (mistral-common's rule)."""
    turns = [m for m in messages if m["role"] != "system" and m["content"].strip()]
    chat = [{"role": "user" if i % 2 == 0 else "assistant", "content": m["content"]} for i, m in enumerate(turns)]
    if not chat or chat[-1]["role"] != "user":
        chat.append({"role": "user", "content": "Go on."})
    return [{"role": "system", "content": "Be brief."}, *chat]


@settings(max_examples=100, deadline=None)
@given(messages=MESSAGES)
def test_mistral_chat_counts_like_mistral_common(messages: list[dict[str, str]]) -> None:
    from mistral_common.protocol.instruct.request import ChatCompletionRequest

    chat = _alternating(messages)
    spec = tokenizer.model_spec("open-mistral-nemo-2407")
    assert spec is not None
    reference = _mistral_tekken().encode_chat_completion(ChatCompletionRequest(messages=chat)).tokens
    assert count_chat(spec, "tekken", chat, []) == (len(reference), True)


@settings(max_examples=100, deadline=None)
@given(messages=MESSAGES)
def test_chatml_and_harmony_counts_equal_the_rendered_prompt(messages: list[dict[str, str]]) -> None:
    assume(not any("<|" in m["content"] for m in messages))  # specials in content count as text here
    qwen = tokenizer.model_spec("qwen2.5-7b-instruct")
    oss = tokenizer.model_spec("gpt-oss-20b")
    assert qwen is not None and oss is not None
    chat = (
        messages if messages[0]["role"] == "system" else [{"role": "system", "content": qwen.default_system}, *messages]
    )
    chatml = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in chat) + "<|im_start|>assistant\n"
    assert count_chat(qwen, "qwen2", messages, []) == (_count_with_specials(chatml, "qwen2"), True)
    harmony = "".join(f"<|start|>{m['role']}<|message|>{m['content']}<|end|>" for m in messages) + "<|start|>assistant"
    reference = tiktoken.get_encoding("o200k_harmony").encode(harmony, allowed_special="all")
    assert count_chat(oss, "o200k_harmony", messages, []) == (len(reference), True)


def _count_with_specials(text: str, encoding: str) -> int:
    """The rendered prompt's tokens: each special token 1, the text between them encoded (NFC) as is."""
    import re
    import unicodedata

    specials = ["<|im_start|>", "<|im_end|>"]
    parts = re.split("(" + "|".join(map(re.escape, specials)) + ")", text)
    enc = tokenizer.get_encoding(encoding)
    return sum(1 if p in specials else len(enc.encode_ordinary(unicodedata.normalize("NFC", p))) for p in parts if p)
