"""Policies: what produces the agent's turns, and how a `--policy` spec names one.

Spec syntax: `KIND[:TARGET][?OPTION=VALUE&...]`

| spec | policy |
|---|---|
| `openai:MODEL[@BASE_URL]` | a chat model behind an OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp) |
| `local:smollm2`, `local:PATH` | a local transformers model on the CPU (token ids + log-probs kept) |
| `replay` | the oracle: plays each task's gold actions and says its communicate items |
| `recorded:PATH` | plays back assistant turns saved as JSON |

Options are the policy's settings, e.g. `openai:gpt-4.1-mini?temperature=0.7&max_tokens=512`,
`openai:qwen@http://127.0.0.1:8001/v1?tool_format=hermes`, `local:smollm2?max_new_tokens=64`. Kinds resolve
through `POLICIES` (built-ins plus the entry-point group `groundstate.policies`), so a third-party package can
add one; an unknown kind raises `UnknownNameError` listing the known ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from trainer.policies.base import (
    STOP_MARK,
    ContextOverflowError,
    Message,
    Policy,
    PolicyError,
    PolicySpecError,
    ToolCall,
    Turn,
    openai_tools,
)
from trainer.registry import Registry, UnknownNameError

__all__ = [
    "POLICIES",
    "STOP_MARK",
    "ContextOverflowError",
    "Message",
    "Policy",
    "PolicyError",
    "PolicySpec",
    "PolicySpecError",
    "ToolCall",
    "Turn",
    "UnknownNameError",
    "load_policy",
    "openai_tools",
    "parse_spec",
]

POLICIES: Registry[Policy] = Registry(
    "policy",
    Policy,  # type: ignore[type-abstract]  # an ABC: the entries are its concrete subclasses
    builtins={
        "openai": "trainer.policies.openai_chat:OpenAIChatPolicy",
        "local": "trainer.policies.local:LocalPolicy",
        "replay": "trainer.policies.scripted:ReplayPolicy",
        "recorded": "trainer.policies.scripted:RecordedPolicy",
    },
    entry_point_group="groundstate.policies",
)
"""The policy kinds a spec may name."""


@dataclass(frozen=True)
class PolicySpec:
    """A parsed `KIND[:TARGET][?OPTION=VALUE&...]`."""

    kind: str
    target: str = ""
    options: dict[str, str] = field(default_factory=dict)


def parse_spec(spec: str) -> PolicySpec:
    """Split a policy spec into kind, target and options.

    Args:
        spec: E.g. `openai:gpt-4.1-mini@http://127.0.0.1:8001/v1?temperature=0.7`.

    Returns:
        The parts; option values stay strings (each policy validates its own).

    Raises:
        PolicySpecError: An empty kind, malformed options, or an option given twice.
    """
    head, _, query = spec.strip().partition("?")
    kind, _, target = head.partition(":")
    if not kind:
        raise PolicySpecError(f"a policy spec starts with its kind (KIND[:TARGET][?OPTIONS]), got {spec!r}")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError as exc:
        raise PolicySpecError(f"malformed options in {spec!r} (want ?key=value&key=value): {exc}") from None
    options = dict(pairs)
    if "" in options:
        raise PolicySpecError(f"an option without a name in {spec!r} (want ?key=value&key=value)")
    if len(options) != len(pairs):
        raise PolicySpecError(f"an option is given twice in {spec!r}")
    return PolicySpec(kind=kind, target=target, options=options)


def load_policy(spec: str) -> Policy:
    """Build the policy a spec names.

    Raises:
        UnknownNameError: The kind is not registered (the message lists the known kinds).
        PolicySpecError: The target or an option is invalid.
    """
    parsed = parse_spec(spec)
    return POLICIES.load(parsed.kind).from_spec(parsed.target, parsed.options)
