"""From recorded calls and the server's score to token-exact training samples.

Each model call is a sample: its prompt ids (loss mask 0), its completion ids (loss mask 1) and their
log-probs, with the episode's reward. Consecutive calls merge into one sample where the later prompt starts
with the earlier prompt plus its completion, token for token (the agent resent the conversation and the
template rendered it back to the same ids): the tokens between are the environment's (tool results, the
user's reply), appended with mask 0. Where the prefix does not match (the template rendered the earlier
turn differently from what was sampled), the calls stay separate samples: a sampled token is never replaced
by a re-tokenised one.

`episode_row` gives TRL's GRPO one row per episode (its group is the task's episodes): the last call merged
with every earlier call that merges into it; earlier calls that did not merge are context there, masked.
"""

from __future__ import annotations

from pydantic import Field

from shared.strict_model import StrictModel
from trainer.gateway.records import RecordedCall

__all__ = ["TokenSample", "episode_row", "samples_from_calls"]


class TokenSample(StrictModel):
    """One training sample of an episode."""

    episode_id: str
    calls: list[int]
    """The indexes of the recorded calls merged into this sample."""
    prompt_ids: list[int]
    """The first call's prompt (never trained on)."""
    completion_ids: list[int]
    """Everything after the prompt: sampled ids and, between merged calls, the environment's ids."""
    mask: list[int]
    """1 on sampled ids, 0 on the environment's; one per `completion_ids` entry."""
    logprobs: list[float]
    """The sampling log-prob of each sampled id, 0.0 on the environment's; one per `completion_ids` entry."""
    reward: float | None = Field(default=None)
    """The episode's reward (1.0 or 0.0); null for a backend error (the sample is masked out)."""


def _merges(sample: TokenSample, call: RecordedCall) -> bool:
    sequence = sample.prompt_ids + sample.completion_ids
    return len(call.prompt_ids) >= len(sequence) and call.prompt_ids[: len(sequence)] == sequence


def _start(call: RecordedCall, reward: float | None) -> TokenSample:
    return TokenSample(
        episode_id=call.episode_id,
        calls=[call.index],
        prompt_ids=list(call.prompt_ids),
        completion_ids=list(call.completion_ids),
        mask=[1] * len(call.completion_ids),
        logprobs=list(call.logprobs),
        reward=reward,
    )


def _extend(sample: TokenSample, call: RecordedCall) -> TokenSample:
    between = call.prompt_ids[len(sample.prompt_ids) + len(sample.completion_ids) :]
    return sample.model_copy(
        update={
            "calls": [*sample.calls, call.index],
            "completion_ids": [*sample.completion_ids, *between, *call.completion_ids],
            "mask": [*sample.mask, *([0] * len(between)), *([1] * len(call.completion_ids))],
            "logprobs": [*sample.logprobs, *([0.0] * len(between)), *call.logprobs],
        }
    )


def samples_from_calls(calls: list[RecordedCall], reward: float | None) -> list[TokenSample]:
    """The episode's samples: calls merged where the prefix matches token for token, else one per call."""
    samples: list[TokenSample] = []
    for call in sorted(calls, key=lambda c: c.index):
        if samples and _merges(samples[-1], call):
            samples[-1] = _extend(samples[-1], call)
        else:
            samples.append(_start(call, reward))
    return samples


def episode_row(calls: list[RecordedCall], reward: float | None) -> TokenSample:
    """One sample for the whole episode: the last sample, which holds the final call (see module docstring).

    Raises:
        ValueError: The episode has no recorded call.
    """
    samples = samples_from_calls(calls, reward)
    if not samples:
        raise ValueError("the episode has no recorded model call")
    return samples[-1]
