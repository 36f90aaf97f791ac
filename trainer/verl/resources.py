"""What a Verl config asks of the hardware and the data, checked before anything starts (`--dry-run` too).

Verl's own `validate_config` accepts configurations that cannot run: a rollout tensor parallelism of 2 on
one GPU, a dataset of one row with 18 tasks a step, a 7B model whose training state outgrows the GPUs. These
checks refuse them with the reason:

- parallelism: the rollout's (and a Megatron actor's) tensor × pipeline parallel size must divide the GPUs
  declared (`trainer.n_gpus_per_node` × `trainer.nnodes`);
- batches: `data.train_batch_size` rows at least in the train files (when they can be read), and
  `actor.ppo_mini_batch_size` at most `data.train_batch_size`;
- memory: a floor on each GPU's share — FSDP's training state, 16 bytes a parameter (bf16 weights and
  gradients, fp32 master weights and two Adam moments) sharded over every GPU, less what is offloaded to the
  CPU; vLLM's copy of the weights, 2 bytes a parameter over the tensor-parallel group, within its
  `gpu_memory_utilization` — against `groundstate.gpu_memory_gb` (80 by default). The parameters come from
  the model's `config.json` when the path is a local directory, else from a size in its name (`7B`, `135M`).
  Activations and the KV cache come on top: a config that passes may still need more.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["estimated_parameters", "resource_problems"]

TRAIN_BYTES_PER_PARAM = 16
"""bf16 weights (2) and gradients (2), fp32 master weights (4) and two Adam moments (8)."""
ROLLOUT_BYTES_PER_PARAM = 2
"""vLLM serves bf16 weights."""


def estimated_parameters(model_path: str) -> int | None:
    """The model's parameter count: from a local `config.json`, else a size in its name; None if neither."""
    config = Path(model_path).expanduser() / "config.json"
    if config.is_file():
        try:
            counted = _count(json.loads(config.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, KeyError):
            counted = None
        if counted:
            return counted
    match = re.search(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([BM])\b", Path(model_path).name, re.I)
    if match is None:
        return None
    return int(float(match[1]) * (1e9 if match[2].upper() == "B" else 1e6))


def _count(config: dict[str, Any]) -> int | None:
    """Parameters of a decoder-only transformer from its Hugging Face config (embeddings, attention, MLP)."""
    hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
    vocab, inner = int(config["vocab_size"]), int(config.get("intermediate_size") or 4 * hidden)
    heads = int(config["num_attention_heads"])
    kv_heads = int(config.get("num_key_value_heads") or heads)
    head_dim = int(config.get("head_dim") or hidden // heads)
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    per_layer = attention + 3 * hidden * inner + 2 * hidden
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    return embeddings + layers * per_layer


def resource_problems(config: Any, gpu_memory_gb: float, rows: int | None) -> list[str]:
    """Why the config cannot run on what it declares (empty when nothing is found).

    Args:
        config: The composed Verl config.
        gpu_memory_gb: Memory of one GPU (`groundstate.gpu_memory_gb`).
        rows: Rows in the train files, or None when they could not be counted.
    """
    trainer, ref = config.trainer, config.actor_rollout_ref
    gpus = int(trainer.n_gpus_per_node) * int(trainer.nnodes)
    problems = []
    rollout = ref.rollout
    groups = [_parallel("actor_rollout_ref.rollout", rollout)]
    if ref.actor.get("strategy") == "megatron" and ref.actor.get("megatron"):
        groups.append(_parallel("actor_rollout_ref.actor.megatron", ref.actor.megatron))
    for where, tensor, pipeline in groups:
        if gpus % (tensor * pipeline):
            problems.append(
                f"{where}: tensor_model_parallel_size={tensor} x pipeline_model_parallel_size={pipeline} "
                f"does not divide the {gpus} GPUs declared (trainer.n_gpus_per_node="
                f"{trainer.n_gpus_per_node} x trainer.nnodes={trainer.nnodes})"
            )
    batch = int(config.data.train_batch_size)
    if rows is not None and rows < batch:
        problems.append(
            f"data.train_files: {rows} rows, fewer than data.train_batch_size={batch}: not one step's worth "
            "of tasks (lower data.train_batch_size, or build a larger pool)"
        )
    mini = ref.actor.get("ppo_mini_batch_size")
    if mini is not None and int(mini) > batch:
        problems.append(
            f"actor_rollout_ref.actor.ppo_mini_batch_size={mini} exceeds data.train_batch_size={batch}"
        )
    problems += _memory_problems(config, gpus, gpu_memory_gb)
    return problems


def _parallel(where: str, section: Any) -> tuple[str, int, int]:
    """A section's tensor and pipeline parallel sizes (1 when unset)."""
    tensor = int(section.get("tensor_model_parallel_size") or 1)
    return where, tensor, int(section.get("pipeline_model_parallel_size") or 1)


def _memory_problems(config: Any, gpus: int, gpu_memory_gb: float) -> list[str]:
    ref = config.actor_rollout_ref
    path = str(ref.model.path)
    params = estimated_parameters(path)
    if params is None or gpus < 1:
        return []
    fsdp = ref.actor.get("fsdp_config") or {}
    per_param = TRAIN_BYTES_PER_PARAM
    if fsdp.get("optimizer_offload"):
        per_param -= 12  # master weights and moments live on the CPU
    if fsdp.get("param_offload"):
        per_param -= 2
    if ref.model.get("lora_rank"):
        per_param = 2  # the frozen base in bf16; the adapters' state is small
    gib = 1024**3
    training = params * per_param / gpus / gib
    tensor = int(ref.rollout.get("tensor_model_parallel_size") or 1)
    rollout = params * ROLLOUT_BYTES_PER_PARAM / tensor / gib
    share = float(ref.rollout.get("gpu_memory_utilization") or 0.9)
    problems = []
    size = f"{path} (~{params / 1e9:.1f}B parameters)"
    if training > gpu_memory_gb:
        problems.append(
            f"memory: {size} needs at least {training:.0f} GB per GPU for its FSDP training state "
            f"({per_param} bytes a parameter over {gpus} GPUs), more than the {gpu_memory_gb:g} GB declared "
            "(groundstate.gpu_memory_gb): add GPUs, offload (actor_rollout_ref.actor.fsdp_config."
            "param_offload/optimizer_offload=true), train LoRA (--config grpo_lora) or a smaller model"
        )
    if rollout > share * gpu_memory_gb:
        problems.append(
            f"memory: vLLM's copy of {size} takes {rollout:.0f} GB per GPU over tensor parallelism {tensor}, "
            f"more than gpu_memory_utilization={share:g} of {gpu_memory_gb:g} GB"
        )
    return problems
