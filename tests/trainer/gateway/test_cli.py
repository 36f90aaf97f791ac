"""`groundstate gateway` with the real SmolLM2-135M (transformers, CPU): the recorded ids are the model's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.live_server import free_port
from tests.trainer.scripted_model import smollm2_tokenizer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gateway() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "groundstate", "gateway", "--model", "smollm2", "--port", str(port)]
    command += ["--max-new-tokens", "24", "--threads", "2"]
    proc = subprocess.Popen(command, env=dict(os.environ), stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600  # loading the model takes long on a busy machine
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("groundstate gateway did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_recorded_ids_decode_to_exactly_what_the_model_answered(gateway: str) -> None:
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Name a colour."},
    ]
    answer = httpx.post(
        f"{gateway}/episodes/ep-1/v1/chat/completions",
        json={"model": "smollm2", "messages": messages},
        timeout=120,
    ).json()
    content = answer["choices"][0]["message"]["content"] or ""
    (call,) = httpx.get(f"{gateway}/episodes/ep-1/calls").json()
    tokenizer = smollm2_tokenizer()
    decoded = tokenizer.decode(call["completion_ids"], skip_special_tokens=True)
    assert decoded.strip() == content.strip() and content.strip()
    rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert call["prompt_ids"] == tokenizer.encode(rendered, add_special_tokens=False)
    assert len(call["logprobs"]) == len(call["completion_ids"]) and all(lp <= 0 for lp in call["logprobs"])
    assert answer["usage"]["completion_tokens"] == len(call["completion_ids"])
    assert httpx.get(f"{gateway}/episodes/ep-2/calls").json() == []  # recorded per episode


def test_a_streaming_request_is_refused_naming_the_field(gateway: str) -> None:
    body = {"model": "smollm2", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    answer = httpx.post(f"{gateway}/episodes/ep-3/v1/chat/completions", json=body)
    assert answer.status_code == 400 and answer.json()["error"]["field"] == "stream"
