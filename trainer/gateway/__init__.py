"""The model gateway: train an agent program as it is, from the model calls it makes.

`create_gateway_app` serves an OpenAI-compatible endpoint per episode in front of a `GatewayBackend` and
records every call's exact tokens (`RecordedCall`); `samples_from_calls` / `episode_row` turn an episode's
calls plus the server's score into token-exact samples, and `grpo_step` trains on them with TRL.
"""

from trainer.gateway.app import ChatRequest, create_gateway_app
from trainer.gateway.backend import GatewayBackend, Generation, LocalBackend
from trainer.gateway.records import CallRecorder, RecordedCall
from trainer.gateway.samples import TokenSample, episode_row, samples_from_calls

__all__ = [
    "CallRecorder",
    "ChatRequest",
    "GatewayBackend",
    "Generation",
    "LocalBackend",
    "RecordedCall",
    "TokenSample",
    "create_gateway_app",
    "episode_row",
    "samples_from_calls",
]
