"""Counting the tokens of a prompt before it is sent (``ioa-synth estimate``), offline.

Which tokenizer counts (:func:`counter_for`):

- a component on the embedded model: that model's own tokenizer, read out of its
  ``.gguf`` file (vocabulary and merges with the ``gguf`` package, assembled into a
  ``tokenizers`` byte-level BPE with the pre-tokenizer llama.cpp uses for it), the chat
  messages laid out by the model's own chat template: exact;
- a remote model ``tiktoken`` knows (``gpt-4o``, ``gpt-4.1``, ``o3``...): its encoding, when
  the BPE file is in tiktoken's cache (``TIKTOKEN_CACHE_DIR``; tiktoken downloads it on
  first use, which this machine cannot: docs/scale.md says how to fill the cache), plus
  OpenAI's per-message framing (3 tokens a message, 3 to prime the reply);
- any other remote model: an installed embedded model's tokenizer as a stand-in (models
  of this generation cut English prose within ~10-15% of one another), else characters / 4.

A counter's ``exact`` says whether it is the model's own tokenizer; ``name`` says which
one was used (the estimate's assumptions show it). The tokenizer assembled from a
``.gguf`` is cached as ``tokenizer.json`` (reading a 1 GB file's metadata takes seconds).
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

#: Pre-tokenizer split patterns of llama.cpp's ``tokenizer.ggml.pre`` values (the regexes
#: their tokenizers were trained with; Qwen2's is Hugging Face's ``PRETOKENIZE_REGEX``).
_QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
_LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")
_SPLITS = {"qwen2": _QWEN2, "deepseek-r1-qwen": _QWEN2, "llama3": _LLAMA3, "llama-bpe": _LLAMA3}
#: ``pre`` values that split digits one by one before GPT-2's byte-level split (SmolLM, StarCoder).
_DIGITS = {"smollm", "starcoder", "refact"}

#: OpenAI's chat framing: tokens per message and to prime the reply (their cookbook's count).
PER_MESSAGE, REPLY_PRIMING = 3, 3


@dataclass
class TokenCounter:
    """Counts tokens of chat messages (:meth:`messages`) and plain text (:meth:`text`).

    ``name``: the tokenizer (``gguf:SmolLM2-135M-Instruct.Q4_1.gguf``, ``tiktoken:o200k_base``,
    ``chars/4``); ``exact``: it is the counted model's own; ``note``: how it was chosen."""

    name: str
    exact: bool
    encode: Callable[[str], int]
    frame: Callable[[list[dict[str, str]]], str] | None = None
    per_message: int = 0
    note: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def text(self, text: str) -> int:
        """Tokens of ``text``."""
        return self.encode(text) if text else 0

    def messages(self, messages: list[dict[str, str]]) -> int:
        """Tokens of a chat prompt as the server sees it (chat template, or framing)."""
        if self.frame is not None:
            return self.encode(self.frame(messages))
        return sum(self.encode(m.get("content") or "") + self.per_message for m in messages) + \
            (REPLY_PRIMING if self.per_message else 0)


def chars_counter(note: str = "") -> TokenCounter:
    """The stated approximation: one token per 4 characters (English prose, BPE tokenizers)."""
    return TokenCounter("chars/4", False, lambda text: max(1, len(text) // 4), per_message=PER_MESSAGE, note=note)


class TokenizerError(RuntimeError):
    """A tokenizer could not be built (file missing or not a tokenizer this module knows)."""


def _cache_path(gguf: Path) -> Path:
    from ioa_synth.llm.local_weights import cache_dir

    st = gguf.stat()
    tag = hashlib.sha256(f"{gguf.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    return cache_dir() / "tokenizers" / f"{gguf.stem}-{tag}.json"


def _read_gguf(path: Path) -> tuple[Any, str | None]:
    """``(tokenizers.Tokenizer, chat_template)`` assembled from a ``.gguf``'s metadata."""
    import gguf
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    reader = gguf.GGUFReader(str(path))

    def value(key: str) -> Any:
        f = reader.fields.get(key)
        return f.contents() if f is not None else None

    if value("tokenizer.ggml.model") != "gpt2":
        raise TokenizerError(f"{path.name}: tokenizer {value('tokenizer.ggml.model')!r} is not a byte-level BPE")
    tokens, merges = value("tokenizer.ggml.tokens"), value("tokenizer.ggml.merges")
    kinds = value("tokenizer.ggml.token_type") or []
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                               merges=[tuple(m.split(" ", 1)) for m in merges], ignore_merges=False))
    pre = value("tokenizer.ggml.pre")
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=pre not in _SPLITS)
    if pre in _SPLITS:
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(_SPLITS[pre]), behavior="isolated"),
                                                     byte_level])
    elif pre in _DIGITS:
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, k in zip(tokens, kinds) if int(k) == 3])  # CONTROL tokens: <|im_start|>...
    return tok, value("tokenizer.chat_template")


def gguf_counter(path: Path, exact: bool = True, note: str = "") -> TokenCounter:
    """The tokenizer of the model in ``path`` (a ``.gguf``), with its chat template.

    Raises:
        TokenizerError: the file is missing or holds no byte-level BPE tokenizer.
    """
    path = Path(path)
    if not path.is_file():
        raise TokenizerError(f"{path}: no such model file")
    tok, frame = _loaded_gguf(path, _cache_path(path))
    encode: Callable[[str], int] = lambda text: len(tok.encode(text, add_special_tokens=False).ids)  # noqa: E731
    return TokenCounter(f"gguf:{path.name}", exact, encode, frame, per_message=0 if frame else PER_MESSAGE, note=note)


@functools.lru_cache(maxsize=4)
def _loaded_gguf(path: Path, cached: Path) -> tuple[Any, Callable[[list[dict[str, str]]], str] | None]:
    """The tokenizer and chat frame of the ``.gguf`` in ``path``, built once per process and
    ``cached`` file (:func:`_cache_path`: the file's version in the cache folder); building
    one takes ~0.25 s, and a run's estimate asks for it per component."""
    from tokenizers import Tokenizer

    try:
        data = json.loads(cached.read_text(encoding="utf-8"))
        tok, template = Tokenizer.from_str(data["tokenizer"]), data["chat_template"]
    except (OSError, ValueError, KeyError):
        tok, template = _read_gguf(path)
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            from ioa_synth.core.atomic import write_bytes_atomic

            write_bytes_atomic(cached, json.dumps({"tokenizer": tok.to_str(), "chat_template": template}).encode())
        except OSError:
            pass  # a read-only cache: read the file again next time
    return tok, (_chat_frame(template) if template else None)


def _chat_frame(template: str) -> Callable[[list[dict[str, str]]], str]:
    """The model's chat template, rendered as its server renders it (a reply to follow)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    tmpl = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(template)

    def frame(messages: list[dict[str, str]]) -> str:
        return tmpl.render(messages=messages, add_generation_prompt=True, bos_token="", eos_token="")

    return frame


def tiktoken_counter(model: str) -> TokenCounter | None:
    """``tiktoken``'s encoding of ``model`` when tiktoken knows the model and its BPE file is
    cached; ``None`` otherwise (no download is tried)."""
    try:
        import tiktoken
        import tiktoken.load
    except ImportError:
        return None
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return None
    original = tiktoken.load.read_file

    def offline(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise OSError("not cached")
        return original(blobpath)

    with _TIKTOKEN_LOCK:
        tiktoken.load.read_file = offline  # the cache is read; a miss raises instead of downloading
        try:
            enc = tiktoken.get_encoding(name)
        except (OSError, ValueError):
            return None
        finally:
            tiktoken.load.read_file = original
    return TokenCounter(f"tiktoken:{name}", True, lambda text: len(enc.encode(text, disallowed_special=())),
                        per_message=PER_MESSAGE)


_TIKTOKEN_LOCK = threading.Lock()


def local_gguf(local_model: str | None) -> Path | None:
    """The ``.gguf`` of the embedded model ``local_model`` (``None``: the best installed),
    without assembling anything: SmolLM2's file, or Qwen's assembled one once it exists."""
    from ioa_synth.llm.local_weights import QWEN_FILE, cache_dir, installed_local_models, smollm2_path

    installed = installed_local_models()
    name = local_model or (installed[-1] if installed else None)
    if name == "smollm2-135m":
        return smollm2_path()
    if name == "qwen2.5-coder-1.5b":
        path = cache_dir() / QWEN_FILE
        return path if path.is_file() else smollm2_path()
    return None


def counter_for(model: str, embedded: bool, local_model: str | None = None, choice: str | None = None) -> TokenCounter:
    """The counter for a component's ``model`` (see the module docstring); ``choice``
    (``--tokenizer``) forces one: ``chars``, ``tiktoken:<encoding>``, ``gguf:<path>`` or an
    embedded model's name.

    Raises:
        TokenizerError: a forced tokenizer cannot be built.
    """
    if choice:
        return _forced(choice)
    if embedded:
        path = local_gguf(local_model)
        if path is not None:
            return gguf_counter(path, note="the embedded model's own tokenizer")
    else:
        found = tiktoken_counter(model)
        if found is not None:
            return found
    path = local_gguf(None)
    why = (f"{model}'s own tokenizer is not available offline" if not embedded
           else "the embedded model's file is not installed")
    if path is not None:
        try:
            return gguf_counter(path, exact=False, note=f"{why}; counted with {path.name} as a stand-in")
        except TokenizerError:
            pass
    return chars_counter(note=f"{why}; approximated as characters / 4")


def _forced(choice: str) -> TokenCounter:
    import tiktoken

    if choice == "chars":
        return chars_counter(note="--tokenizer chars")
    if choice.startswith("tiktoken:"):
        name = choice.split(":", 1)[1]
        found = tiktoken_counter_encoding(name, tiktoken)
        if found is None:
            raise TokenizerError(f"--tokenizer {choice}: tiktoken's {name} file is not cached (set TIKTOKEN_CACHE_DIR "
                                 "to a folder holding it; docs/scale.md)")
        return found
    if choice.startswith("gguf:"):
        return gguf_counter(Path(choice.split(":", 1)[1]), note=f"--tokenizer {choice}")
    path = local_gguf(choice)
    if path is None:
        raise TokenizerError(f"--tokenizer {choice}: not installed (give chars, tiktoken:<encoding>, gguf:<path> or "
                             "an installed embedded model)")
    return gguf_counter(path, note=f"--tokenizer {choice}")


def tiktoken_counter_encoding(name: str, tiktoken: Any) -> TokenCounter | None:
    """Like :func:`tiktoken_counter` for an encoding name (``o200k_base``)."""
    try:
        model = next(m for m, e in tiktoken.model.MODEL_TO_ENCODING.items() if e == name)
    except StopIteration:
        return None
    return tiktoken_counter(model)
