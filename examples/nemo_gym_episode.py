"""Play one groundstate task through NeMo Gym's resources-server routes, as NeMo Gym's simple agent does.

Run with the interpreter of `.venv-nemo-gym` (`make nemo-gym-env`), with the repository on `PYTHONPATH`:

    python examples/nemo_gym_episode.py --server http://127.0.0.1:8000 --task starter-renew-001 \
        --calls '[{"name": "renew_loan", "arguments": {"loan_id": "L-1500"}}]' --final "Done: renewed."

The resources server is `trainer.adapters.nemo_gym_server.GroundstateResourcesServer`, served by NeMo Gym's
own app (its session middleware, `/seed_session`, `/verify`); this script is its agent: it seeds a session,
posts each tool call to `/{tool}` with the session cookie, then verifies a Responses-API response ending in
the final text. It prints the seed and verify answers as one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from fastapi.testclient import TestClient
from nemo_gym.server_utils import BaseServerConfig, ServerClient
from omegaconf import OmegaConf

from trainer.adapters.nemo_gym_server import GroundstateResourcesServer, GroundstateResourcesServerConfig


def main() -> None:
    """Seed, call the tools, verify; print the answers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--task", required=True)
    parser.add_argument("--env", default="starter")
    parser.add_argument("--calls", default="[]", help="JSON list of {name, arguments}.")
    parser.add_argument("--final", default="", help="The agent's final text.")
    parser.add_argument(
        "--hold-after-seed",
        default=None,
        help="A file to create once seeded; the script waits until it is removed.",
    )
    args = parser.parse_args()
    config = GroundstateResourcesServerConfig(
        host="127.0.0.1", port=0, entrypoint="", name="groundstate", groundstate_url=args.server, env=args.env
    )
    client = ServerClient(
        head_server_config=BaseServerConfig(host="127.0.0.1", port=0), global_config_dict=OmegaConf.create({})
    )
    server = GroundstateResourcesServer(config=config, server_client=client)
    with TestClient(server.setup_webserver()) as http:
        seeded = http.post("/seed_session", json={"task_id": args.task})
        seeded.raise_for_status()
        if args.hold_after_seed:  # a test stops the groundstate server here, mid-episode
            hold = Path(args.hold_after_seed)
            hold.write_text("seeded")
            while hold.exists():
                time.sleep(0.05)
        outputs = []
        for call in json.loads(args.calls):
            answer = http.post(f"/{call['name']}", json=call["arguments"])
            outputs.append(answer.text)
        message = {
            "id": "msg_final", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": args.final, "annotations": []}],
        }  # fmt: skip
        response = {
            "id": "resp_final", "created_at": time.time(), "model": "agent", "object": "response",
            "output": [message], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        }  # fmt: skip
        verify = http.post(
            "/verify",
            json={
                "responses_create_params": {"input": [{"role": "user", "content": "x"}]},
                "response": response,
            },
        )
        verify.raise_for_status()
        print(json.dumps({"seed": seeded.json(), "tool_outputs": outputs, "verify": verify.json()}))


if __name__ == "__main__":
    main()
