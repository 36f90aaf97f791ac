"""The OpenAI-compatible chat client shared by the simulated user (`users/`) and the judge (`judge/`)."""

from env_server.llm.endpoint import ChatEndpoint, LLMEndpoint, MalformedOutput, RequestRejected

__all__ = ["ChatEndpoint", "LLMEndpoint", "MalformedOutput", "RequestRejected"]
